#!/usr/bin/env python3
"""Smoke check of any protocol-1 adapter (adapters/PROTOCOL.md) against git.

    python3 adapters/dulwich/smoke.py [--keep] ADAPTER-COMMAND [ARGS...]

e.g. ``smoke.py target/debug/reftable-adapter`` or
``smoke.py /tmp/venv/bin/python adapters/dulwich/adapter.py``.

Makes a reftable repository with git (hermetic: GIT_CONFIG_NOSYSTEM, HOME in the scratch
directory, fixed identities and dates), then

1. reads: the adapter's refs, single refs and reflogs against ``git for-each-ref
   --include-root-refs`` and ``git log -g``;
2. writes: a fixed list of transactions, each sent to the adapter on the repository and run
   by ``git update-ref --stdin`` on a copy; the verdicts must agree, and after each step git
   must read both repositories the same (refs and reflogs), and the adapter must read its
   repository as git does;
3. ``git refs verify`` and ``git fsck`` on the adapter's repository at the end.

A step the adapter answers ``unsupported`` is skipped on both sides and listed as not tried.
Prints one line per mismatch. Exit status: 0 clean, 1 mismatches, 2 cannot run (no git with
reftable, the adapter does not start or does not speak protocol 1).

Reflog old ids are not shown by git: they are taken from the next older entry's new id,
which is exact for the chains this script writes.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

ZERO = "0" * 40


class Cannot(Exception):
    """The check cannot run."""


class Env:
    def __init__(self, scratch):
        self.scratch = scratch
        os.makedirs(os.path.join(scratch, "home"), exist_ok=True)
        self.base = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.path.join(scratch, "home"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_AUTHOR_NAME": "A U Thor",
            "GIT_AUTHOR_EMAIL": "author@example.com",
            "GIT_AUTHOR_DATE": "1700000000 +0200",
        }
        self.committer(1700000000, 200)

    def committer(self, time, tz):
        self.ident = {"name": "C O Mitter", "email": "committer@example.com", "time": time, "tz": tz}
        self.base.update(GIT_COMMITTER_NAME=self.ident["name"], GIT_COMMITTER_EMAIL=self.ident["email"],
                         GIT_COMMITTER_DATE=f"{time} {'-' if tz < 0 else '+'}{abs(tz):04d}")

    def git(self, repo, *args, input=None, check=True):
        p = subprocess.run(["git", *args], cwd=repo, env=self.base, input=input,
                           capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {p.stderr.strip()}")
        return p


class Adapter:
    def __init__(self, argv):
        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        except OSError as e:
            raise Cannot(f"cannot start {argv}: {e}")

    def ask(self, req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise Cannot(f"adapter exited (status {self.p.wait()}) on {req.get('verb')}")
        return json.loads(line)

    def finish(self):
        self.p.stdin.close()
        return self.p.wait(timeout=30)


def git_refs(env, repo, candidates=()):
    """git's refs. for-each-ref skips dangling symrefs silently: each of `candidates` and of
    the reflog names it does not list is asked of `git symbolic-ref`."""
    fmt = "--format=%(refname) %(objectname) %(symref) %(*objectname)"
    p = env.git(repo, "for-each-ref", "--include-root-refs", fmt)
    refs = []
    for line in p.stdout.splitlines():
        name, oid, sym, peeled = line.split(" ")
        refs.append({"name": name, "oid": oid or None, "symref": sym or None, "peeled": peeled or None})
    listed = {r["name"] for r in refs}
    for name in sorted(set(candidates) | set(git_reflog_names(env, repo))):
        if name in listed:
            continue
        target = env.git(repo, "symbolic-ref", "-q", name, check=False).stdout.strip()
        if target:
            refs.append({"name": name, "oid": None, "symref": target, "peeled": None})
    return sorted(refs, key=lambda r: r["name"].encode())


def git_reflog_names(env, repo):
    return env.git(repo, "reflog", "list").stdout.splitlines()


def git_reflog(env, repo, name):
    fmt = "--format=%H%x00%gn%x00%ge%x00%gd%x00%gs"
    out = env.git(repo, "log", "-g", "--date=raw", fmt, name, "--", check=False).stdout
    rows = [line.split("\0") for line in out.splitlines()]
    entries = []
    for i, r in enumerate(rows):
        time, tz = r[3].rsplit("@{", 1)[1].rstrip("}").split(" ")
        entries.append({"old": rows[i + 1][0] if i + 1 < len(rows) else ZERO, "new": r[0],
                        "name": r[1], "email": r[2], "time": int(time), "tz": int(tz), "message": r[4]})
    return entries


def git_view(env, repo, candidates=()):
    """What git reads of a repository: refs, and each reflog (but a dangling symref's, which
    `git log -g` cannot show)."""
    refs = git_refs(env, repo, candidates)
    dangling = {r["name"] for r in refs if r["symref"] and not r["oid"]}
    names = [n for n in git_reflog_names(env, repo) if n not in dangling]
    return {"refs": refs, "reflogs": {n: git_reflog(env, repo, n) for n in names}}


def make_repo(env, path):
    env.git(env.scratch, "init", "-q", "--ref-format=reftable", "-b", "main", path)
    env.git(path, "commit", "-q", "--allow-empty", "-m", "one")
    c1 = env.git(path, "rev-parse", "HEAD").stdout.strip()
    env.git(path, "commit", "-q", "--allow-empty", "-m", "two")
    c2 = env.git(path, "rev-parse", "HEAD").stdout.strip()
    env.git(path, "update-ref", "-m", "make topic", "refs/heads/topic", c1)
    env.git(path, "tag", "-a", "-m", "ann", "v1")
    env.git(path, "symbolic-ref", "-m", "alias it", "refs/heads/alias", "refs/heads/topic")
    return c1, c2


class Checker:
    def __init__(self, env, adapter, repo):
        self.env, self.a, self.repo = env, adapter, repo
        self.mismatches, self.not_tried = [], []

    def mismatch(self, where, what, ours, gits):
        line = f"MISMATCH {where}: {what}: adapter {json.dumps(ours)} / git {json.dumps(gits)}"
        self.mismatches.append(line)
        print(line)

    def answered(self, where, req):
        ans = self.a.ask(req)
        if ans.get("answer") == "unsupported":
            self.not_tried.append(f"{where}: {req['verb']}: {ans.get('message')}")
            return None
        if ans.get("answer") != "done":
            self.mismatch(where, f"{req['verb']} {req.get('name', '')} failed", ans, "done")
            return None
        return ans

    def check_reads(self, where):
        ans = self.answered(where, {"verb": "refs"})
        view = git_view(self.env, self.repo, [r["name"] for r in (ans or {}).get("refs", [])])
        if ans is not None and ans["refs"] != view["refs"]:
            ours = {r["name"]: r for r in ans["refs"]}
            gits = {r["name"]: r for r in view["refs"]}
            for n in sorted(set(ours) | set(gits)):
                if ours.get(n) != gits.get(n):
                    self.mismatch(where, f"refs[{n}]", ours.get(n), gits.get(n))
        for r in view["refs"] + [{"name": "refs/heads/does-not-exist"}]:
            ans = self.answered(where, {"verb": "ref", "name": r["name"]})
            want = r if "oid" in r else None
            if ans is not None and ans["ref"] != want:
                self.mismatch(where, f"ref {r['name']}", ans["ref"], want)
        for n, entries in view["reflogs"].items():
            ans = self.answered(where, {"verb": "reflog", "name": n})
            if ans is not None and (ans["entries"] != entries or not ans["exists"]):
                self.mismatch(where, f"reflog {n}", ans["entries"], entries)
        return view


GIT_REASONS = [
    ("but expected", "old-value"), ("reference already exists", "old-value"),
    ("unable to resolve reference", "old-value"), ("reference is missing", "old-value"),
    ("exists; cannot create", "df-conflict"), ("cannot process", "df-conflict"),
    ("multiple updates", "name"), ("bad name", "name"), ("invalid", "name"),
    ("nonexistent object", "missing"), ("non-commit", "other"), ("Unable to create", "lock"),
]


def git_reason(stderr):
    for needle, reason in GIT_REASONS:
        if needle in stderr:
            return reason
    return "other"


def stdin_line(u):
    name, new, old = u["name"], u.get("new", "verify"), u.get("old", "any")
    old_oid = {"any": "", "absent": ZERO}.get(old, old) if isinstance(old, str) else ""
    tail = f" {old_oid}" if old_oid else ""
    pre = "option no-deref\n" if u.get("no_deref") else ""
    if isinstance(new, dict):
        if old == "any":
            return f"{pre}symref-update {name} {new['symref']}\n"
        if old == "absent":
            return f"{pre}symref-create {name} {new['symref']}\n"
        return f"{pre}symref-update {name} {new['symref']} oid {old}\n"
    if new is None:
        return f"{pre}delete {name}{tail}\n"
    return f"{pre}update {name} {new}{tail}\n"


def steps(c1, c2):
    """(label, updates); each transaction has one message for all of its updates."""
    def u(name, new, old="any", **kw):
        return dict(name=name, new=new, old=old, **kw)
    return [
        ("update with old id", [u("refs/heads/main", c1, c2)]),
        ("unconditional update", [u("refs/heads/topic", c2)]),
        ("create", [u("refs/heads/new", c1, "absent")]),
        ("create of an existing ref", [u("refs/heads/new", c2, "absent")]),
        ("update with a wrong old id", [u("refs/heads/main", c2, c2)]),
        ("D/F conflict", [u("refs/heads/main/sub", c1)]),
        ("delete with old id", [u("refs/heads/new", None, c1)]),
        ("unconditional delete", [u("refs/heads/topic", None)]),
        ("symref create, no-deref", [u("refs/heads/sym", {"symref": "refs/heads/main"}, no_deref=True)]),
        ("update through HEAD", [u("HEAD", c2)]),
        ("two creates", [u("refs/heads/a", c1, "absent"), u("refs/heads/b", c2, "absent")]),
        ("two updates, the second refused", [u("refs/heads/c", c1, "absent"), u("refs/heads/a", c2, c2)]),
        ("create after a refused transaction", [u("refs/heads/d", c1, "absent")]),
    ]


def run_step(chk, env, mirror, i, label, updates):
    where = f"step {i} ({label})"
    msg = f"smoke step {i}"
    env.committer(1700000000 + 100 * i, [200, -800, 530][i % 3])
    upd = [dict(x, message=msg) for x in updates]
    ans = chk.a.ask({"verb": "transaction", "committer": env.ident, "updates": upd})
    if ans.get("answer") == "unsupported":
        chk.not_tried.append(f"{where}: {ans.get('message')}")
        return
    script = "".join(stdin_line(x) for x in updates)
    g = env.git(mirror, "update-ref", "-m", msg, "--stdin", input=script, check=False)
    git_verdict = "done" if g.returncode == 0 else f"refused/{git_reason(g.stderr)}"
    ours = ans.get("answer")
    ours_verdict = f"refused/{ans.get('reason')}" if ours == "refused" else ours
    if ours_verdict != git_verdict:
        chk.mismatch(where, "verdict", {"answer": ours_verdict, "message": ans.get("message")},
                     {"answer": git_verdict, "stderr": g.stderr.strip()})
    mine, gits = git_view(env, chk.repo), git_view(env, mirror)
    ours_refs = {r["name"]: r for r in mine["refs"]}
    git_refs_ = {r["name"]: r for r in gits["refs"]}
    for n in sorted(set(ours_refs) | set(git_refs_)):
        if ours_refs.get(n) != git_refs_.get(n):
            chk.mismatch(where, f"git reads ref {n} as written", ours_refs.get(n), git_refs_.get(n))
    for n in sorted(set(mine["reflogs"]) | set(gits["reflogs"])):
        if mine["reflogs"].get(n) != gits["reflogs"].get(n):
            chk.mismatch(where, f"git reads reflog {n} as written", mine["reflogs"].get(n),
                         gits["reflogs"].get(n))
    chk.check_reads(where)


def run(argv, keep):
    if shutil.which("git") is None:
        raise Cannot("no git on PATH")
    scratch = tempfile.mkdtemp(prefix="adapter-smoke-")
    try:
        env = Env(scratch)
        repo, mirror = os.path.join(scratch, "repo"), os.path.join(scratch, "mirror")
        try:
            c1, c2 = make_repo(env, repo)
        except RuntimeError as e:
            raise Cannot(f"git cannot make a reftable repository: {e}")
        shutil.copytree(repo, mirror, symlinks=True)
        a = Adapter(argv)
        hello = a.ask({"verb": "hello", "protocol": 1})
        if hello.get("answer") != "done" or hello.get("protocol") != 1:
            raise Cannot(f"adapter does not speak protocol 1: {hello}")
        print(f"adapter: {hello.get('implementation')} {hello.get('version')}, verbs {hello.get('verbs')}")
        opened = a.ask({"verb": "open", "gitdir": os.path.join(repo, ".git")})
        if opened.get("answer") != "done":
            raise Cannot(f"adapter cannot open the repository: {opened}")
        chk = Checker(env, a, repo)
        chk.check_reads("initial reads")
        for i, (label, updates) in enumerate(steps(c1, c2), 1):
            run_step(chk, env, mirror, i, label, updates)
        for args in (["refs", "verify"], ["fsck", "--no-progress"]):
            p, q = (env.git(r, *args, check=False) for r in (repo, mirror))
            if (p.returncode, p.stderr.strip()) != (q.returncode, q.stderr.strip()):
                chk.mismatch("end", f"git {' '.join(args)}", p.stderr.strip(), q.stderr.strip())
        a.ask({"verb": "quit"})
        status = a.finish()
        if status != 0:
            chk.mismatch("end", "adapter exit status", status, 0)
        for n in chk.not_tried:
            print(f"NOT TRIED {n}")
        print(f"{len(chk.mismatches)} mismatch(es), {len(chk.not_tried)} not tried")
        return 1 if chk.mismatches else 0
    finally:
        if keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def main():
    args = sys.argv[1:]
    keep = bool(args) and args[0] == "--keep"
    if keep:
        args = args[1:]
    if not args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        return run(args, keep)
    except Cannot as e:
        print(f"cannot run: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
