#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""layers.py - the layers of kcc's user/ tree (Documentation/layout.rst)
and the rooms of kmod/ (Documentation/kcc-module.rst, "Layout").

    user/lib       0  the library: stream, profile, symbols, k-CCF, traces
    user/report    1  the report model and its formats
    user/harness   2  the fidelity and simulation harness
    user           3  kcc.c, kccread.c and the builtin-*.c

kmod/ is one folder of rooms, each X.c with its X.h, in the order of
KMOD_ROOMS below, lowest first: a room may depend on the rooms below
it only.

A module is X.c with its X.h.  Module A depends on module B when A's
files include B's header, or when A's object calls a function or uses a
variable that B's object defines (nm of each file compiled alone, so a
header that declares another module's functions does not hide the
dependency; for kmod/, nm of the objects of a kcc.ko build given with
-k, as its files cannot be compiled without a kernel tree).  Findings,
one a line as "file:line: layers: message":

  - a module depends on a module of a higher layer (the library
    including a harness or report header, the model calling a builtin),
    or a room of kmod/ on a higher room (the budget calling the
    sessions);
  - an import circle: modules that depend on each other, directly or
    through others (report.c calling the pprof writer that calls
    report.c);
  - a file of kmod/ in no declared room.

Usage: layers.py [-k KBUILD_DIR] SRC TMPDIR [CC]; KBUILD_DIR is where
kcc.ko was built (selftests/guest/build_module.sh), holding kmod/*.o.
Exit status 0 (the caller counts the findings), 2 on a usage error.
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

LAYERS = [("user/lib", 0), ("user/report", 1), ("user/harness", 2),
          ("user", 3)]
# kmod/'s rooms, lowest first: the parameters and the shared state, the
# budget and the permission model, then the rooms that use them.
KMOD_ROOMS = ["kcc_param", "kcc_state", "kcc_budget", "kcc_perm",
              "kcc_valence", "kcc_watch", "kcc_maps", "kcc_task",
              "kcc_sample", "kcc_session", "kcc_dev", "kcc_main"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def modules(src, findings):
    """{module: {"rank", "files", "tree"}}, module = "dir/stem"."""
    mods = {}
    for d, rank in LAYERS:
        path = os.path.join(src, d)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            stem, ext = os.path.splitext(name)
            if ext not in (".c", ".h"):
                continue
            m = mods.setdefault(d + "/" + stem, {"rank": rank, "files": [],
                                                 "tree": "user"})
            m["files"].append(d + "/" + name)
    path = os.path.join(src, "kmod")
    for name in sorted(os.listdir(path)) if os.path.isdir(path) else []:
        stem, ext = os.path.splitext(name)
        if ext not in (".c", ".h"):
            continue
        if stem not in KMOD_ROOMS:
            findings.append("kmod/%s:1: layers: %s is in no room of kmod/ "
                            "(KMOD_ROOMS in scripts/layers.py)" %
                            (name, stem))
            continue
        m = mods.setdefault("kmod/" + stem, {"rank": KMOD_ROOMS.index(stem),
                                             "files": [], "tree": "kmod"})
        m["files"].append("kmod/" + name)
    return mods


def header_module(mods, inc, tree):
    """The module of #include "inc" from a file of @tree, searched as the
    compiler does (kmod/ and user/ never see each other's headers)."""
    stem = os.path.splitext(os.path.basename(inc))[0]
    if "/" in inc:
        return None
    dirs = ["kmod"] if tree == "kmod" else [d for d, _ in LAYERS]
    for d in dirs:
        m = d + "/" + stem
        if m in mods and d + "/" + inc in mods[m]["files"]:
            return m
    return None


def kbuild_nm(kdir, c_file):
    """(defined, undefined, error) global symbols of @c_file's object in
    the kcc.ko build directory @kdir."""
    obj = os.path.join(kdir, os.path.splitext(c_file)[0] + ".o")
    if not os.path.isfile(obj):
        return set(), set(), "no object %s in %s" % (
            os.path.relpath(obj, kdir), kdir)
    return nm_symbols(obj) + (None,)


def compile_nm(src, tmp, cc, c_file):
    """(defined, undefined, error) global symbols of @c_file alone."""
    obj = os.path.join(tmp, c_file.replace("/", "__") + ".o")
    flags = ["-std=gnu11", "-D_GNU_SOURCE", "-O0", "-w", "-c",
             "-Iinclude/uapi", "-Ilbr"]
    flags += ["-I" + d for d, _ in LAYERS]
    r = subprocess.run([cc] + flags + ["-o", obj, c_file], cwd=src,
                       capture_output=True, text=True)
    if r.returncode:
        err = (r.stderr.strip().splitlines() or ["failed"])[0]
        return set(), set(), err
    return nm_symbols(obj) + (None,)


def nm_symbols(obj):
    """(defined, undefined) global symbols of the object file @obj."""
    r = subprocess.run(["nm", "-g", obj], capture_output=True, text=True)
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in "BCDGRSTVW":
            defined.add(f[2])
    return defined, undefined


def use_line(src, c_file, sym):
    """First line of @c_file naming @sym (1 if none: a macro's use)."""
    pat = re.compile(r"\b%s\b" % re.escape(sym))
    with open(os.path.join(src, c_file), errors="replace") as f:
        for n, line in enumerate(f, 1):
            if pat.search(line) and not line.lstrip().startswith(("*",
                                                                   "/*")):
                return n
    return 1


def cycles(edges):
    """Elementary circles, one per strongly connected component with
    more than one module (Tarjan), each from its smallest module."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:
        # The shortest way back to the smallest module (breadth-first).
        start, members = comp[0], set(comp)
        prev, todo = {start: None}, [start]
        path = None
        while todo and path is None:
            nxt = []
            for v in todo:
                for w in sorted(edges.get(v, {})):
                    if w not in members:
                        continue
                    if w == start:
                        path = [w]
                        while v is not None:
                            path.append(v)
                            v = prev[v]
                        path.reverse()
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if path:
                    break
            todo = nxt
        out.append((path, comp))
    return out


def main():
    args = sys.argv[1:]
    kdir = None
    if args[:1] == ["-k"] and len(args) > 1:
        kdir, args = args[1], args[2:]
    if len(args) not in (2, 3):
        print("usage: layers.py [-k KBUILD_DIR] SRC TMPDIR [CC]",
              file=sys.stderr)
        return 2
    src, tmp = args[0], args[1]
    cc = args[2] if len(args) == 3 else "cc"
    findings = []
    mods = modules(src, findings)
    edges = {}		# module -> {module: "file:line"}

    def edge(a, b, where):
        if a != b:
            edges.setdefault(a, {}).setdefault(b, where)

    for m, info in mods.items():
        for f in info["files"]:
            with open(os.path.join(src, f), errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    hit = INCLUDE.match(line)
                    if hit:
                        h = header_module(mods, hit.group(1), info["tree"])
                        if h:
                            edge(m, h, "%s:%d" % (f, n))

    c_files = [(m, f) for m, info in mods.items() for f in info["files"]
               if f.endswith(".c") and info["tree"] == "user"]
    with ThreadPoolExecutor(max_workers=2) as ex:
        nms = list(ex.map(lambda mf: compile_nm(src, tmp, cc, mf[1]),
                          c_files))
    if kdir:
        k_files = [(m, f) for m, info in mods.items() for f in info["files"]
                   if f.endswith(".c") and info["tree"] == "kmod"]
        c_files += k_files
        nms += [kbuild_nm(kdir, f) for _, f in k_files]
    owner = {}
    for (m, f), (defined, _, err) in zip(c_files, nms):
        if err:
            findings.append("%s:1: layers: does not compile alone: %s" %
                            (f, err) if mods[m]["tree"] == "user" else
                            "%s:1: layers: %s" % (f, err))
        for s in defined:
            owner.setdefault((mods[m]["tree"], s), m)
    for (m, f), (_, undefined, _) in zip(c_files, nms):
        for s in sorted(undefined):
            o = owner.get((mods[m]["tree"], s))
            if o and o != m and o not in edges.get(m, {}):
                edge(m, o, "%s:%d" % (f, use_line(src, f, s)))

    for a in sorted(edges):
        for b, where in sorted(edges[a].items()):
            if mods[b]["rank"] > mods[a]["rank"]:
                findings.append("%s: layers: %s depends on %s, a higher "
                                "%s" % (where, a, b,
                                        "room" if mods[a]["tree"] == "kmod"
                                        else "layer"))
    for path, comp in cycles(edges):
        rest = sorted(set(comp) - set(path))
        findings.append("%s: layers: import circle %s%s" %
                        (edges[path[0]][path[1]], " -> ".join(path),
                         " (and through %s)" % ", ".join(rest)
                         if rest else ""))
    for f in sorted(findings):
        print(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
