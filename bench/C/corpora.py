#!/usr/bin/env python3
"""Real published JSON for benchmark C, from Debian packages.

Downloads each package with `apt-get download` (the machine's own apt
sources; nothing is installed), unpacks it with `dpkg-deb -x` and writes
one COPY file per corpus: one row per JSON file of the package,
"<number>\\t<path>\\t<the file's text>", files that do not parse as JSON
left out.
The text is loaded as it is published (jsonb then keeps numbers as
written).  Prints one line per corpus: name, package, version, licence,
files, bytes.

  bench/C/corpora.py --work DIR [--corpus botocore,mdn_bcd,iso_codes]
"""

import argparse
import glob
import json
import os
import subprocess

# corpus: (package, where its JSON files are, licence of those files)
CORPORA = {
    "botocore": ("python3-botocore", "usr/lib/python3/dist-packages/botocore/data",
                 "Apache-2.0"),
    "mdn_bcd": ("node-mdn-browser-compat-data", "usr/share/nodejs",
                "CC0-1.0 (browser-specs: Expat)"),
    "iso_codes": ("iso-codes", "usr/share/iso-codes/json", "LGPL-2.1+"),
}


def copy_text(s):
    return (s.replace("\\", "\\\\").replace("\t", "\\t")
            .replace("\n", "\\n").replace("\r", "\\r"))


def fetch(name, work):
    package, subdir, licence = CORPORA[name]
    root = os.path.join(work, "corpora", name)
    out = os.path.join(work, f"corpus-{name}.copy")
    os.makedirs(root, exist_ok=True)
    debs = glob.glob(os.path.join(root, f"{package}_*.deb"))
    if not debs:
        subprocess.run(["apt-get", "download", package], cwd=root, check=True,
                       stdout=subprocess.DEVNULL)
        debs = glob.glob(os.path.join(root, f"{package}_*.deb"))
    deb = sorted(debs)[-1]
    version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], check=True,
                             capture_output=True, text=True).stdout.strip()
    tree = os.path.join(root, "tree")
    if not os.path.isdir(tree):
        subprocess.run(["dpkg-deb", "-x", deb, tree], check=True)
    files = 0
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        for dirpath, _, names in sorted(os.walk(os.path.join(tree, subdir))):
            for n in sorted(names):
                if not n.endswith(".json"):
                    continue
                path = os.path.join(dirpath, n)
                if os.path.islink(path):
                    continue
                with open(path, encoding="utf-8") as src:
                    text = src.read()
                try:
                    json.loads(text)
                except ValueError:
                    continue
                files += 1
                f.write(f"{files}\t{os.path.relpath(path, tree)}\t"
                        f"{copy_text(text)}\n")
    os.rename(out + ".tmp", out)
    nbytes = os.path.getsize(out)
    return {"corpus": name, "package": package, "version": version,
            "licence": licence, "files": files, "bytes": nbytes, "copy": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--corpus", default=",".join(CORPORA))
    args = ap.parse_args()
    for name in args.corpus.split(","):
        c = fetch(name, args.work)
        print(f"{c['corpus']}\t{c['package']}\t{c['version']}\t{c['licence']}\t"
              f"{c['files']}\t{c['bytes']}")


if __name__ == "__main__":
    main()
