#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# static.sh - the static checks of scripts/static-checks.sh as TAP, two
# tests per check (three for layers), and two for -Werror in the tools.  First the check on this
# repository, which must be clean: sparse on kcc.ko (against $KDIR),
# checkpatch.pl --strict on kmod/, lbr/ and include/uapi/linux/kcc.h,
# cppcheck, clang-tidy and layers on user/.  Then the same check (static-checks.sh -C) on a small tree with
# one known bug planted for it, which it must report at the planted line:
#
#   sparse      kmod/kccbad_user.c, a tiny module that dereferences a
#               __user pointer ("dereference of noderef expression")
#   checkpatch  kmod/kccbad_style.c, no space after a comma (SPACING)
#   cppcheck    user/planted.c, a write past an array (arrayIndexOutOfBounds)
#   clang-tidy  user/planted.c, a NULL dereference
#               (clang-analyzer-core.NullDereference); one file only
#   layers      user/lib/plant_lib.c including a harness header, and
#               user/report/plant_amodel.c (a model) calling the format
#               of user/report/plant_fmt.c that calls it back (a circle)
#
# -Werror: a warning planted in a copy of the tools' sources fails the
# build of its object with KCC_WERROR=1 (CI) and not without (the
# default, a distribution's build).
#
# A check whose tool is missing is skipped with the package to install;
# findings are shown as comments, "file:line: message".  Needs no $KCC.
# KCC_USER_ONLY (make check-user) skips sparse, which needs kernel headers.
#
# The checks are CPU-bound whole-tree analyses (clang-tidy's analyzer on
# user/ alone takes minutes on two cores), so their time grows with
# the machine's load: over 600 s with seven jobs per core in a loaded
# CI run.  Each check ends when its tool does; the bound only catches a
# hang.
# timeout: 1800
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ktap.sh"

echo "TAP version 13"
ktap_tmpdir static
plan 13

# ---- the planted tree -------------------------------------------------
# Each planted line carries a "PLANT-<check>" comment: the expected line
# number is where that marker is, found by grep below.
p=$tmp/plant
mkdir -p "$p/kmod" "$p/user" "$p/user/lib" "$p/user/report" \
	"$p/user/harness"

cat >"$p/Kbuild" <<'EOF'
# SPDX-License-Identifier: GPL-2.0
obj-m := kccbad.o
kccbad-y := kmod/kccbad_user.o
EOF

cat >"$p/kmod/kccbad_user.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* A module that reads user memory without copy_from_user(). */
#include <linux/module.h>
#include <linux/uaccess.h>

int kccbad_get(int __user *p);

int kccbad_get(int __user *p)
{
	return *p;	/* PLANT-sparse */
}
EXPORT_SYMBOL_GPL(kccbad_get);

MODULE_LICENSE("GPL");
EOF

cat >"$p/kmod/kccbad_style.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* Kernel style but for one missing space. */
static int kccbad_sum(int a,int b)	/* PLANT-checkpatch */
{
	return a + b;
}
EOF

cat >"$p/user/planted.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* One bug for cppcheck, one for the clang static analyzer. */
#include <stddef.h>

int planted_bounds(void);
int planted_null(int x);

int planted_bounds(void)
{
	int a[4] = { 0 };

	a[4] = 1;	/* PLANT-cppcheck */
	return a[0];
}

int planted_null(int x)
{
	int *q = NULL;

	if (x)
		return 0;
	return *q;	/* PLANT-clang-tidy */
}
EOF

# The layers: the library must not include the harness, and the model
# must not call its formats.
cat >"$p/user/harness/plant_sim.h" <<'EOF'
/* SPDX-License-Identifier: GPL-2.0 */
int plant_sim(int x);
EOF
cat >"$p/user/harness/plant_sim.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
#include "plant_sim.h"

int plant_sim(int x)
{
	return x + 1;
}
EOF
cat >"$p/user/lib/plant_lib.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
/* The library, including a harness header. */
#include "plant_sim.h"	/* PLANT-layers-up */

int plant_lib(int x);

int plant_lib(int x)
{
	return 2 * x;
}
EOF
cat >"$p/user/report/plant_amodel.h" <<'EOF'
/* SPDX-License-Identifier: GPL-2.0 */
/* A model whose header declares its format, as report.h once did. */
int plant_amodel_total(int x);
int plant_amodel_print(int x);
int plant_fmt_print(int x);
EOF
cat >"$p/user/report/plant_amodel.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
#include "plant_amodel.h"

int plant_amodel_total(int x)
{
	return 3 * x;
}

int plant_amodel_print(int x)
{
	return plant_fmt_print(x);	/* PLANT-layers-circle */
}
EOF
cat >"$p/user/report/plant_fmt.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
#include "plant_amodel.h"

int plant_fmt_print(int x)
{
	return plant_amodel_total(x) + 1;
}
EOF

# planted CHECK FILE PATTERN [MARK]: CHECK must find PATTERN on the line
# of FILE (relative to the planted tree) marked PLANT-MARK (PLANT-CHECK
# by default) and exit 1.
planted() {
	line=$(grep -n "PLANT-${4:-$1} " "$p/$2" | cut -d: -f1)
	run sh "$top/scripts/static-checks.sh" ${KDIR:+-K "$KDIR"} -C "$p" "$1"
	diag "$tmp/out"
	grep '^static-checks.sh: .* s$' "$tmp/err" | sed 's/^/# planted: /'
	if [ $rc -eq 4 ]; then
		skip "$1 on a planted bug: $(sed -n 's/^static-checks.sh: //p' "$tmp/err" | head -n 1)"
		return
	fi
	if [ $rc -eq 1 ] && grep -E "^$2:$line:([0-9]+:)? .*$3" "$tmp/out" >/dev/null; then
		result 0 "$1 reports the planted bug at $2:$line"
	else
		echo "# expected status 1 and '$2:$line: ...$3'"
		show_err
		result 1 "$1 reports the planted bug at $2:$line"
	fi
}

for c in sparse checkpatch cppcheck clang-tidy layers; do
	if [ "$c" = sparse ] && [ -n "${KCC_USER_ONLY:-}" ]; then
		skip "sparse: KCC_USER_ONLY: no kernel build"
		skip "sparse on a planted bug: KCC_USER_ONLY: no kernel build"
		continue
	fi
	out=$(sh "$top/scripts/static-checks.sh" ${KDIR:+-K "$KDIR"} "$c" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	case $rc in
	0) result 0 "$c: no finding" ;;
	4) why=$(echo "$out" | sed -n 's/^static-checks.sh: //p' | head -n 1)
	   skip "$c: ${why:-tool missing}" ;;
	*) result 1 "$c: $(echo "$out" | grep -c -E '^[^ ]+:[0-9]+:') finding(s)" ;;
	esac
	case $c in
	sparse) planted sparse kmod/kccbad_user.c 'warning: dereference of noderef expression' ;;
	checkpatch) planted checkpatch kmod/kccbad_style.c 'ERROR:SPACING:' ;;
	cppcheck) planted cppcheck user/planted.c '\[arrayIndexOutOfBounds\]' ;;
	clang-tidy) planted clang-tidy user/planted.c '\[clang-analyzer-core\.NullDereference\]' ;;
	layers)
		planted layers user/lib/plant_lib.c \
			'layers: user/lib/plant_lib depends on user/harness/plant_sim, a higher layer' \
			layers-up
		planted layers user/report/plant_amodel.c \
			'layers: import circle user/report/plant_amodel -> user/report/plant_fmt -> user/report/plant_amodel$' \
			layers-circle
		;;
	esac
done
# ---- -Werror in CI builds only ---------------------------------------
w=$tmp/werror
mkdir -p "$w" && cp -R "$top/Makefile" "$top/include" "$top/lbr" "$top/user" "$w/" &&
printf '\nstatic int kcc_werror_probe(void)\n{\n\treturn 0;\n}\n' >>"$w/user/lib/symtab.c"
obj=build/opt/user/lib/symtab.o
werror_build() {	# werror_build VALUE LOG: make $obj with KCC_WERROR=VALUE
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL LC_ALL=C \
		make -C "$w" KCC_WERROR="$1" "$obj" >"$2" 2>&1
}
werror_build 1 "$tmp/werror1.log"
rc=$?
if [ $rc -ne 0 ] && [ ! -f "$w/$obj" ] &&
   grep -q "error: .kcc_werror_probe. defined but not used" "$tmp/werror1.log"; then
	result 0 "KCC_WERROR=1: a warning fails the tools' build"
else
	sed 's/^/# /' "$tmp/werror1.log"
	result 1 "KCC_WERROR=1: a warning fails the tools' build"
fi
werror_build "" "$tmp/werror0.log"
rc=$?
if [ $rc -eq 0 ] && [ -s "$w/$obj" ] &&
   grep -q "warning: .kcc_werror_probe. defined but not used" "$tmp/werror0.log"; then
	result 0 "default build: the warning is reported, the tools build"
else
	sed 's/^/# /' "$tmp/werror0.log"
	result 1 "default build: the warning is reported, the tools build"
fi
ktap_exit
