# SPDX-License-Identifier: GPL-2.0
#
# bench_fmt.awk - what the tables of make bench-guest (bench_table.awk)
# and make bench-guest-long (bench_curve.awk) print alike; given first
# to awk: awk -f bench_fmt.awk -f bench_table.awk RUNS.

# Bytes in K or M (1024-based), one decimal.
function human(b) {
	b += 0
	if (b >= 1048576)
		return sprintf("%.1fM", b / 1048576)
	if (b >= 1024)
		return sprintf("%.1fK", b / 1024)
	return sprintf("%d", b)
}
