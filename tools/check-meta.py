#!/usr/bin/env python3
"""tools/check-meta.py [META.json] -- check the distribution metadata.

Checks META.json against the PGXN Meta Spec, version 1.0.0 (the fields it
requires and the form of every field it defines; custom fields start with
x_), and against the tree: the extension's control file gives the same
version, and the files it names exist.  Prints what is wrong and exits 1,
or prints "META.json: ok".
"""

import json
import os
import re
import sys

LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd",
    "freebsd", "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1",
    "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5",
    "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source",
    "restricted", "unrestricted", "unknown",
}
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+)?$")
VERSION_RANGE = re.compile(
    r"^\s*((==|!=|>=|<=|>|<)\s*)?(0|[1-9]\d*)(\.(0|[1-9]\d*)){0,2}(-[0-9A-Za-z-]+)?\s*$")
TOP_KEYS = {
    "abstract", "description", "generated_by", "license", "maintainer",
    "meta-spec", "name", "no_index", "prereqs", "provides", "release_status",
    "resources", "tags", "version",
}
REQUIRED = {"abstract", "license", "maintainer", "meta-spec", "name",
            "provides", "version"}
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}


def check(meta, top):
    errors = []

    def err(msg):
        errors.append(msg)

    def custom(key):
        return key.startswith(("x_", "X_"))

    def known_object(where, key, value, known, what):
        """Is key one the spec knows (or a custom one), naming an object?"""
        if key not in known and not custom(key):
            err(f"{where}: not a {what} of the spec")
            return False
        if not isinstance(value, dict):
            err(f"{where}: an object")
            return False
        return True

    def string(value, where, allow_empty=False):
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            err(f"{where}: a non-empty string is required")
            return False
        return True

    for key in sorted(REQUIRED - meta.keys()):
        err(f"{key}: required")
    for key in sorted(meta.keys() - TOP_KEYS):
        if not custom(key):
            err(f"{key}: not a field of the spec (custom fields start with x_)")

    if "name" in meta and string(meta["name"], "name"):
        if len(meta["name"]) < 2 or re.search(r"[\s/\\:]", meta["name"]):
            err("name: at least 2 characters, no whitespace, '/', '\\' or ':'")
    if "version" in meta and string(meta["version"], "version"):
        if not SEMVER.match(meta["version"]):
            err(f"version: {meta['version']!r} is not a semantic version")
    if "abstract" in meta:
        string(meta["abstract"], "abstract")
    if "description" in meta:
        string(meta["description"], "description")
    if "generated_by" in meta:
        string(meta["generated_by"], "generated_by")

    maint = meta.get("maintainer")
    if maint is not None:
        items = maint if isinstance(maint, list) else [maint]
        if not items:
            err("maintainer: at least one")
        for i, m in enumerate(items):
            string(m, f"maintainer[{i}]")

    lic = meta.get("license")
    if lic is not None:
        if isinstance(lic, str):
            if lic not in LICENSES:
                err(f"license: {lic!r} is not a license string of the spec")
        elif isinstance(lic, list):
            for x in lic:
                if x not in LICENSES:
                    err(f"license: {x!r} is not a license string of the spec")
        elif isinstance(lic, dict):
            for name, url in lic.items():
                string(url, f"license.{name}")
        else:
            err("license: a string, a list of strings or an object")

    spec = meta.get("meta-spec")
    if spec is not None:
        if not isinstance(spec, dict) or spec.get("version") != "1.0.0":
            err("meta-spec: an object whose version is \"1.0.0\"")
        else:
            for key in spec.keys() - {"version", "url"}:
                if not custom(key):
                    err(f"meta-spec.{key}: not a field of the spec")

    provides = meta.get("provides")
    if provides is not None:
        if not isinstance(provides, dict) or not provides:
            err("provides: an object naming at least one extension")
        else:
            for ext, info in provides.items():
                where = f"provides.{ext}"
                if not isinstance(info, dict):
                    err(f"{where}: an object")
                    continue
                for key in ("file", "version"):
                    if key not in info:
                        err(f"{where}.{key}: required")
                for key in info.keys() - {"file", "version", "abstract", "docfile"}:
                    if not custom(key):
                        err(f"{where}.{key}: not a field of the spec")
                if "version" in info and string(info["version"], f"{where}.version"):
                    if not SEMVER.match(info["version"]):
                        err(f"{where}.version: not a semantic version")
                for key in ("file", "docfile"):
                    if key in info and string(info[key], f"{where}.{key}"):
                        if not os.path.isfile(os.path.join(top, info[key])):
                            err(f"{where}.{key}: {info[key]} does not exist")

    tags = meta.get("tags")
    if tags is not None:
        if not isinstance(tags, list) or not tags:
            err("tags: a non-empty list")
        else:
            for t in tags:
                if not isinstance(t, str) or not t.strip() or len(t) > 255:
                    err(f"tags: {t!r} is not a string of 1 to 255 characters")

    status = meta.get("release_status")
    if status is not None and status not in ("stable", "testing", "unstable"):
        err("release_status: stable, testing or unstable")

    resources = meta.get("resources")
    if resources is not None:
        if not isinstance(resources, dict):
            err("resources: an object")
        else:
            for key in resources.keys() - {"homepage", "bugtracker", "repository"}:
                if not custom(key):
                    err(f"resources.{key}: not a field of the spec")

    prereqs = meta.get("prereqs")
    if prereqs is not None:
        if not isinstance(prereqs, dict):
            err("prereqs: an object")
        else:
            for phase, rels in prereqs.items():
                if not known_object(f"prereqs.{phase}", phase, rels, PHASES, "phase"):
                    continue
                for rel, deps in rels.items():
                    if not known_object(f"prereqs.{phase}.{rel}", rel, deps,
                                        RELATIONS, "relationship"):
                        continue
                    for dep, rng in deps.items():
                        ranges = str(rng).split(",")
                        if not all(VERSION_RANGE.match(r) for r in ranges):
                            err(f"prereqs.{phase}.{rel}.{dep}: {rng!r} is not a version range")
    return errors


def control_version(top, ext):
    path = os.path.join(top, ext + ".control")
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*default_version\s*=\s*'([^']*)'", line)
            if m:
                return m.group(1)
    return None


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "META.json"
    top = os.path.dirname(os.path.abspath(path))
    with open(path) as f:
        meta = json.load(f)
    errors = check(meta, top)
    # the tree: the control file's version is the distribution's
    for ext, info in (meta.get("provides") or {}).items():
        if not isinstance(info, dict):
            continue
        control = control_version(top, ext)
        version = str(info.get("version", ""))
        if control is None:
            errors.append(f"provides.{ext}: no default_version in {ext}.control")
        elif version.split(".")[:2] != control.split(".")[:2] or \
                version != meta.get("version"):
            errors.append(f"provides.{ext}.version {version} does not match "
                          f"{ext}.control ({control}) or the distribution's "
                          f"version ({meta.get('version')})")
    for e in errors:
        print(f"META.json: {e}")
    if errors:
        return 1
    print("META.json: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
