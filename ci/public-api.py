#!/usr/bin/env python3
"""The reftable crate's public API as a listing, checked against the committed baseline.

Each line is one public item reachable from the crate root: its path, its kind and its
shape (a function's signature, a struct's public fields and whether it is
`#[non_exhaustive]`, an enum's variants, a constant's type). The listing is read from
rustdoc's JSON output (built with RUSTC_BOOTSTRAP=1 on the stable toolchain, in a target
directory of its own).

  ci/public-api.py --check     exit 1 when the API differs from reftable/public-api.txt:
                               lines removed or changed are breaking, lines added are not;
                               both need the baseline updated, on purpose
  ci/public-api.py --write     write the baseline
  ci/public-api.py --summary   public items per module, and the structs whose public
                               fields make every new field a breaking change
"""
import json
import os
import subprocess
import sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "reftable", "public-api.txt")
TARGET = os.path.join(ROOT, "target", "public-api")


def rustdoc_json():
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    subprocess.run(
        ["cargo", "rustdoc", "-q", "--locked", "-p", "reftable", "--lib",
         "--target-dir", TARGET, "--", "-Z", "unstable-options", "--output-format", "json"],
        cwd=ROOT, env=env, check=True)
    with open(os.path.join(TARGET, "doc", "reftable.json")) as f:
        return json.load(f)


def ty(t):
    """A type as Rust source, near enough to compare."""
    if t is None:
        return "()"
    (k, v), = t.items()
    if k == "resolved_path":
        return v["path"] + args(v.get("args"))
    if k == "primitive" or k == "generic":
        return v
    if k == "borrowed_ref":
        return "&" + ("mut " if v["is_mutable"] else "") + ty(v["type"])
    if k == "slice":
        return "[" + ty(v) + "]"
    if k == "array":
        return "[" + ty(v["type"]) + "; " + v["len"] + "]"
    if k == "tuple":
        return "(" + ", ".join(ty(x) for x in v) + ")"
    if k == "raw_pointer":
        return "*" + ("mut " if v["is_mutable"] else "const ") + ty(v["type"])
    if k in ("impl_trait", "dyn_trait"):
        bounds = v if k == "impl_trait" else v["traits"]
        names = []
        for b in bounds:
            tb = b.get("trait_bound") or b.get("trait") and b
            if tb and "trait" in tb:
                names.append(tb["trait"]["path"] + args(tb["trait"].get("args")))
        return ("impl " if k == "impl_trait" else "dyn ") + " + ".join(names)
    if k == "qualified_path":
        return "<" + ty(v["self_type"]) + ">::" + v["name"]
    return json.dumps(t, sort_keys=True)


def args(a):
    if not a or "angle_bracketed" not in a:
        return ""
    parts = []
    for x in a["angle_bracketed"]["args"]:
        if "type" in x:
            parts.append(ty(x["type"]))
        elif "lifetime" in x:
            parts.append(x["lifetime"])
        else:
            parts.append(json.dumps(x, sort_keys=True))
    return "<" + ", ".join(parts) + ">" if parts else ""


def sig(f):
    s = f["sig"]
    ins = ", ".join(n + ": " + ty(t) if n != "self" else ty(t) for n, t in s["inputs"])
    out = s.get("output")
    return "(" + ins + ")" + (" -> " + ty(out) if out else "")


class Lister:
    def __init__(self, doc):
        self.index = doc["index"]
        self.lines = []
        self.seen = set()

    def item(self, i):
        return self.index.get(str(i)) or self.index.get(i)

    def walk(self, i, path):
        it = self.item(i)
        if it is None or (it["visibility"] != "public" and path):
            return
        (kind, inner), = it["inner"].items()
        if kind == "use":
            if inner.get("id") is not None and not inner.get("is_glob"):
                self.walk(inner["id"], path[:-1] + [inner["name"]])
            return
        key = (str(i), tuple(path))
        if key in self.seen:
            return
        self.seen.add(key)
        name = "::".join(path)
        exhaustive = "" if "#[non_exhaustive]" in it.get("attrs", []) or any(
            "non_exhaustive" in str(a) for a in it.get("attrs", [])) else " exhaustive"
        if kind == "module":
            self.lines.append(f"mod {name}")
            for c in inner["items"]:
                ci = self.item(c)
                if ci is not None:
                    self.walk(c, path + [ci.get("name") or ""])
        elif kind == "struct":
            fields = []
            k = inner["kind"]
            if "plain" in k:
                for fid in k["plain"]["fields"]:
                    f = self.item(fid)
                    if f["visibility"] == "public":
                        fields.append(f["name"] + ": " + ty(f["inner"]["struct_field"]))
                if k["plain"].get("has_stripped_fields"):
                    fields.append("..")
            elif "tuple" in k:
                fields = ["pub" if f is not None and self.item(f)["visibility"] == "public"
                          else "_" for f in k["tuple"]]
            self.lines.append(f"struct {name}{exhaustive} {{ {', '.join(fields)} }}")
            self.impls(inner["impls"], path)
        elif kind == "enum":
            vs = [self.item(v)["name"] for v in inner["variants"]]
            self.lines.append(f"enum {name}{exhaustive} {{ {', '.join(vs)} }}")
            self.impls(inner["impls"], path)
        elif kind == "function":
            self.lines.append(f"fn {name}{sig(inner)}")
        elif kind == "trait":
            self.lines.append(f"trait {name}")
            for c in inner["items"]:
                ci = self.item(c)
                if ci is not None and "function" in ci["inner"]:
                    self.lines.append(f"trait-fn {name}::{ci['name']}{sig(ci['inner']['function'])}")
        elif kind in ("constant", "static"):
            t = inner.get("type") or inner.get("ty")
            self.lines.append(f"{kind} {name}: {ty(t)}")
        elif kind == "type_alias":
            self.lines.append(f"type {name} = {ty(inner['type'])}")
        else:
            self.lines.append(f"{kind} {name}")

    def impls(self, impl_ids, path):
        for iid in impl_ids:
            imp = self.item(iid)["inner"]["impl"]
            if imp.get("trait") is not None or imp.get("blanket_impl") is not None:
                continue
            for m in imp["items"]:
                mi = self.item(m)
                if mi["visibility"] == "public" and "function" in mi["inner"]:
                    self.lines.append(f"fn {'::'.join(path + [mi['name']])}{sig(mi['inner']['function'])}")


def listing():
    doc = rustdoc_json()
    lister = Lister(doc)
    lister.walk(doc["root"], ["reftable"])
    return sorted(set(lister.lines))


def summary(lines):
    """Public items per module (re-exports counted where they are reachable) and the
    structs whose public fields, without `#[non_exhaustive]`, make a new field breaking."""
    modules = sorted((l.split(" ")[1] for l in lines if l.startswith("mod ")), key=len)
    per = Counter()
    open_structs = []
    for l in lines:
        kind, rest = l.split(" ", 1)
        path = rest.split("(")[0].split(" ")[0].rstrip(":")
        if kind == "mod":
            continue
        home = max((m for m in modules if path.startswith(m + "::")), key=len)
        per[home] += 1
        fields = rest[rest.find("{"):]
        if kind == "struct" and " exhaustive {" in rest and ": " in fields:
            open_structs.append(path)
    print(f"{sum(per.values())} public items (and {len(modules)} modules)")
    for m, n in sorted(per.items()):
        print(f"  {m}: {n}")
    print(f"{len(open_structs)} structs with public fields and no #[non_exhaustive]:")
    for s in open_structs:
        print(f"  {s}")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "--check"
    lines = listing()
    if mode == "--write":
        with open(BASELINE, "w") as f:
            f.write("".join(l + "\n" for l in lines))
        print(f"public-api: {len(lines)} items written to {os.path.relpath(BASELINE, ROOT)}")
        return 0
    if mode == "--summary":
        summary(lines)
        return 0
    with open(BASELINE) as f:
        base = [l.rstrip("\n") for l in f]
    removed = sorted(set(base) - set(lines))
    added = sorted(set(lines) - set(base))
    for l in removed:
        print(f"breaking: no longer in the API, or changed: {l}")
    for l in added:
        print(f"added: {l}")
    if removed or added:
        print("public-api: the API differs from reftable/public-api.txt; if that is meant, "
              "run ci/public-api.py --write and commit the baseline with the change")
        return 1
    print(f"public-api: {len(lines)} items, as in the baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
