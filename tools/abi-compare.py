#!/usr/bin/env python3
"""tools/abi-compare.py -- what a module built against stock headers would
see differently on the patched server.

Usage: abi-compare.py STOCK_INCLUDE PATCHED_INCLUDE GENERATED_INCLUDE
                      ALLOWED_FILE HEADER...

Compiles one translation unit that includes the given headers twice, once
against each include tree (the generated headers of a configured build,
pg_config.h and the like, come last in both), and compares

  - the layout of every struct and union the stock headers declare: size,
    and each member's name, offset and type name (DWARF, from readelf);
  - the prototype of every function they declare (gcc -aux-info);
  - the definition of every macro they define (gcc -dM -E).

Anything stock has that the patched headers lay out, declare or define
differently is a break for binary modules, unless ALLOWED_FILE names it
(one "kind name" per line, e.g. "struct AttributeOpts", "macro
VARSIZE_EXTERNAL", "function heap_update"; "#" starts a comment), which is
how patches/README.md's list of what must be rebuilt is kept honest.
Additions (new structs, functions, macros) are not breaks.

Prints every difference, marked "allowed" or "BREAK", and exits 1 if any
break was found.
"""

import os
import re
import subprocess
import sys
import tempfile


def compile_unit(includes, headers, work, tag):
    src = os.path.join(work, tag + ".c")
    with open(src, "w") as f:
        f.write('#include "postgres.h"\n')
        for h in headers:
            f.write('#include "%s"\n' % h)
        # Keep every declared type in the debug info, used or not.
        f.write("int abi_probe_%s;\n" % tag)
    flags = ["-g", "-O0", "-fno-eliminate-unused-debug-types"]
    incs = []
    for d in includes:
        incs += ["-I", d]
    obj = os.path.join(work, tag + ".o")
    aux = os.path.join(work, tag + ".aux")
    subprocess.run(["gcc"] + flags + incs + ["-aux-info", aux, "-c", src,
                                             "-o", obj], check=True)
    macros = subprocess.run(["gcc", "-dM", "-E"] + incs + [src],
                            check=True, capture_output=True,
                            text=True).stdout
    return obj, aux, macros


def read_dwarf(obj):
    """{(kind, name): (size, ((member, offset, type), ...))}"""
    out = subprocess.run(["readelf", "--debug-dump=info", obj], check=True,
                         capture_output=True, text=True).stdout
    dies = {}
    order = []
    cur = None
    die_re = re.compile(r"^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((\w+)\)")
    attr_re = re.compile(r"^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$")
    for line in out.splitlines():
        m = die_re.match(line)
        if m:
            cur = {"depth": int(m.group(1)), "off": int(m.group(2), 16),
                   "tag": m.group(3)}
            dies[cur["off"]] = cur
            order.append(cur)
            continue
        m = attr_re.match(line)
        if m and cur is not None:
            cur[m.group(1)] = m.group(2).strip()

    def name_of(d):
        v = d.get("DW_AT_name", "")
        # "(indirect string, offset: 0x..): name" or plain
        return v.split("): ")[-1].strip()

    def ref(v):
        m = re.search(r"<0x([0-9a-f]+)>", v or "")
        return int(m.group(1), 16) if m else None

    def type_name(off, depth=0):
        if off is None:
            return "void"
        d = dies.get(off)
        if d is None or depth > 20:
            return "?"
        t = d["tag"]
        if t in ("DW_TAG_base_type", "DW_TAG_typedef"):
            return name_of(d)
        if t in ("DW_TAG_structure_type", "DW_TAG_union_type",
                 "DW_TAG_enumeration_type"):
            kind = {"DW_TAG_structure_type": "struct",
                    "DW_TAG_union_type": "union",
                    "DW_TAG_enumeration_type": "enum"}[t]
            return kind + " " + (name_of(d) or "<anon>")
        if t == "DW_TAG_pointer_type":
            return type_name(ref(d.get("DW_AT_type")), depth + 1) + " *"
        if t in ("DW_TAG_const_type", "DW_TAG_volatile_type"):
            return t[7:-5] + " " + type_name(ref(d.get("DW_AT_type")), depth + 1)
        if t == "DW_TAG_array_type":
            return type_name(ref(d.get("DW_AT_type")), depth + 1) + " []"
        if t == "DW_TAG_subroutine_type":
            return "function"
        return t

    types = {}
    for i, d in enumerate(order):
        if d["tag"] not in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            continue
        if "DW_AT_declaration" in d:
            continue
        name = name_of(d)
        if not name:
            # anonymous: known through a typedef naming it
            continue
        members = []
        for c in order[i + 1:]:
            if c["depth"] <= d["depth"]:
                break
            if c["depth"] != d["depth"] + 1 or c["tag"] != "DW_TAG_member":
                continue
            loc = c.get("DW_AT_data_member_location",
                        c.get("DW_AT_data_bit_offset", "0"))
            members.append((name_of(c), loc.split()[0],
                            type_name(ref(c.get("DW_AT_type")))))
        kind = "struct" if d["tag"] == "DW_TAG_structure_type" else "union"
        types[(kind, name)] = (d.get("DW_AT_byte_size", "?"), tuple(members))
    # typedefs of anonymous structs: "typedef struct { ... } Name;"
    for d in order:
        if d["tag"] != "DW_TAG_typedef":
            continue
        t = dies.get(ref(d.get("DW_AT_type")))
        if t is None or t["tag"] not in ("DW_TAG_structure_type",
                                         "DW_TAG_union_type") or name_of(t):
            continue
        i = order.index(t)
        members = []
        for c in order[i + 1:]:
            if c["depth"] <= t["depth"]:
                break
            if c["depth"] == t["depth"] + 1 and c["tag"] == "DW_TAG_member":
                loc = c.get("DW_AT_data_member_location", "0")
                members.append((name_of(c), loc.split()[0],
                                type_name(ref(c.get("DW_AT_type")))))
        types[("struct", name_of(d))] = (t.get("DW_AT_byte_size", "?"),
                                         tuple(members))
    return types


def read_prototypes(aux):
    protos = {}
    with open(aux) as f:
        for line in f:
            # "/* file:line:NC */ extern int foo (int);"
            m = re.match(r"/\*.*?\*/\s*(.*?);\s*$", line)
            if not m:
                continue
            decl = " ".join(m.group(1).split())
            n = re.search(r"(\w+)\s*\(", decl)
            if n:
                protos[n.group(1)] = decl
    return protos


def read_macros(text):
    macros = {}
    for line in text.splitlines():
        m = re.match(r"#define (\w+)(\(.*?\))?\s*(.*)$", line)
        if m:
            macros[m.group(1)] = ((m.group(2) or ""),
                                  " ".join(m.group(3).split()))
    return macros


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    stock, patched, generated, allowed_file = sys.argv[1:5]
    headers = sys.argv[5:]
    allowed = set()
    with open(allowed_file) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                allowed.add(tuple(line.split()[:2]))
    with tempfile.TemporaryDirectory() as work:
        s_obj, s_aux, s_mac = compile_unit([stock, generated], headers, work,
                                           "stock")
        p_obj, p_aux, p_mac = compile_unit([patched, generated], headers,
                                           work, "patched")
        diffs = []
        s_types, p_types = read_dwarf(s_obj), read_dwarf(p_obj)
        for key in sorted(s_types):
            if p_types.get(key) != s_types[key]:
                diffs.append((key[0], key[1], "%s -> %s" % (
                    s_types[key], p_types.get(key, "gone"))))
        s_pro, p_pro = read_prototypes(s_aux), read_prototypes(p_aux)
        for name in sorted(s_pro):
            if p_pro.get(name) != s_pro[name]:
                diffs.append(("function", name, "%s -> %s" % (
                    s_pro[name], p_pro.get(name, "gone"))))
        s_m, p_m = read_macros(s_mac), read_macros(p_mac)
        for name in sorted(s_m):
            if p_m.get(name) != s_m[name]:
                diffs.append(("macro", name, "%r -> %r" % (
                    s_m[name], p_m.get(name, "gone"))))
    breaks = 0
    for kind, name, what in diffs:
        ok = (kind, name) in allowed
        breaks += not ok
        print("%s %s %s: %s" % ("allowed" if ok else "BREAK", kind, name,
                                what if not ok else "changed"))
    print("%d structs/unions, %d functions, %d macros compared; %d differ, "
          "%d not allowed" % (len(s_types), len(s_pro), len(s_m), len(diffs),
                              breaks))
    sys.exit(1 if breaks else 0)


if __name__ == "__main__":
    main()
