#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""layers.py - the layers of kcc's user/ tree (Documentation/layout.rst).

    user/lib       0  the library: stream, profile, symbols, k-CCF, traces
    user/report    1  the report model and its formats
    user/harness   2  the fidelity and simulation harness
    user           3  kcc.c, kccread.c and the builtin-*.c

A module is X.c with its X.h.  Module A depends on module B when A's
files include B's header, or when A's object calls a function or uses a
variable that B's object defines (nm of each file compiled alone, so a
header that declares another module's functions does not hide the
dependency).  Findings, one a line as "file:line: layers: message":

  - a module depends on a module of a higher layer (the library
    including a harness or report header, the model calling a builtin);
  - an import circle: modules that depend on each other, directly or
    through others (report.c calling the pprof writer that calls
    report.c).

Usage: layers.py SRC TMPDIR [CC]; exit status 0 (the caller counts the
findings), 2 on a usage error.
"""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

LAYERS = [("user/lib", 0), ("user/report", 1), ("user/harness", 2),
          ("user", 3)]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def modules(src):
    """{module: {"rank", "files"}}, module = "dir/stem"."""
    mods = {}
    for d, rank in LAYERS:
        path = os.path.join(src, d)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            stem, ext = os.path.splitext(name)
            if ext not in (".c", ".h"):
                continue
            m = mods.setdefault(d + "/" + stem, {"rank": rank, "files": []})
            m["files"].append(d + "/" + name)
    return mods


def header_module(mods, inc):
    """The module of #include "inc", searched as the compiler does."""
    stem = os.path.splitext(os.path.basename(inc))[0]
    if "/" in inc:
        return None
    for d, _ in LAYERS:
        m = d + "/" + stem
        if m in mods and d + "/" + inc in mods[m]["files"]:
            return m
    return None


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
    r = subprocess.run(["nm", "-g", obj], capture_output=True, text=True)
    defined, undefined = set(), set()
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in "BCDGRSTVW":
            defined.add(f[2])
    return defined, undefined, None


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
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    src, tmp = sys.argv[1], sys.argv[2]
    cc = sys.argv[3] if len(sys.argv) == 4 else "cc"
    mods = modules(src)
    edges = {}		# module -> {module: "file:line"}
    findings = []

    def edge(a, b, where):
        if a != b:
            edges.setdefault(a, {}).setdefault(b, where)

    for m, info in mods.items():
        for f in info["files"]:
            with open(os.path.join(src, f), errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    hit = INCLUDE.match(line)
                    if hit:
                        h = header_module(mods, hit.group(1))
                        if h:
                            edge(m, h, "%s:%d" % (f, n))

    c_files = [(m, f) for m, info in mods.items() for f in info["files"]
               if f.endswith(".c")]
    with ThreadPoolExecutor(max_workers=2) as ex:
        nms = list(ex.map(lambda mf: compile_nm(src, tmp, cc, mf[1]),
                          c_files))
    owner = {}
    for (m, f), (defined, _, err) in zip(c_files, nms):
        if err:
            findings.append("%s:1: layers: does not compile alone: %s" %
                            (f, err))
        for s in defined:
            owner.setdefault(s, m)
    for (m, f), (_, undefined, _) in zip(c_files, nms):
        for s in sorted(undefined):
            if s in owner and owner[s] != m and owner[s] not in \
                    edges.get(m, {}):
                edge(m, owner[s], "%s:%d" % (f, use_line(src, f, s)))

    for a in sorted(edges):
        for b, where in sorted(edges[a].items()):
            if mods[b]["rank"] > mods[a]["rank"]:
                findings.append("%s: layers: %s depends on %s, a higher "
                                "layer" % (where, a, b))
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
