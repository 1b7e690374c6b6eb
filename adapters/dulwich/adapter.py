#!/usr/bin/env python3
"""dulwich adapter for the reftable conformance protocol, version 1 (adapters/PROTOCOL.md).

Reads one JSON request a line on stdin, writes one JSON answer a line on stdout, until EOF
or ``quit``; exits 0. Uses only dulwich's public API: ``Repo(gitdir).refs`` (a
``ReftableRefsContainer`` on a reftable repository) and ``Repo.read_reflog``.

What dulwich does not offer is answered ``unsupported``: compaction, reflog expiry,
rename/copy, verify, the reflog list, old values that are symrefs or "present", ``verify``-only
updates. Where the API can only say "did not apply" (``set_if_equals`` and friends return
False), the refusal is ``old-value``: that is what the API documents False to mean; its
message names the call, the old value asked for and what dulwich reads the ref as. A
transaction naming one ref twice is refused (``name``, ``duplicate``) by the adapter itself:
dulwich takes single calls, not a list of updates to check. Peeled ids come from
``Repo.get_peeled``. dulwich's own defects seen through this adapter: FINDINGS.md.
"""

import json
import sys
import traceback

import dulwich
from dulwich.repo import Repo

PROTOCOL = 1
VERBS = ["hello", "open", "refs", "ref", "reflog", "transaction", "reload", "close", "quit"]
NULL_HEX = {40: "0" * 40, 64: "0" * 64}


class Answer(Exception):
    """An answer other than done, raised from inside a verb."""

    def __init__(self, kind, message, **fields):
        super().__init__(message)
        self.fields = dict(fields, answer=kind, message=message)


def unsupported(what):
    return Answer("unsupported", what)


def refused(reason, ref, message, detail=None):
    fields = {"reason": reason, "ref": ref}
    if detail:
        fields["detail"] = detail
    return Answer("refused", message, **fields)


def text(b):
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


def is_null(oid):
    return oid is not None and set(oid) == {"0"}


def tz_hhmm(seconds):
    """dulwich's zone offset in seconds as git's +-HHMM read as an integer."""
    sign = -1 if seconds < 0 else 1
    minutes = abs(seconds) // 60
    return sign * ((minutes // 60) * 100 + minutes % 60)


def tz_seconds(hhmm):
    sign = -1 if hhmm < 0 else 1
    return sign * ((abs(hhmm) // 100) * 3600 + (abs(hhmm) % 100) * 60)


class Session:
    def __init__(self):
        self.gitdir = None
        self.repo = None

    # -- repository -------------------------------------------------------------------
    def open(self, req):
        self.close(req)
        self.gitdir = req["gitdir"]
        self.repo = Repo(self.gitdir)
        cls = type(self.repo.refs).__name__
        if cls != "ReftableRefsContainer":
            raise Answer("error", f"dulwich opened the refs as {cls}, not reftable")
        return {"hash": "sha256" if self.repo.object_format.hex_length == 64 else "sha1"}

    def close(self, _req):
        if self.repo is not None:
            self.repo.close()
        self.repo = None
        return {}

    def reload(self, _req):
        """dulwich reads the stack on every call; a fresh Repo drops any state it kept."""
        self.need()
        self.repo.close()
        self.repo = Repo(self.gitdir)
        return {}

    def need(self):
        if self.repo is None:
            raise Answer("error", "no repository is open")
        return self.repo.refs

    # -- reads ------------------------------------------------------------------------
    def ref_object(self, refs, name):
        """The protocol's ref object for name, or None when dulwich has no such ref."""
        try:
            raw = refs.read_loose_ref(name)
        except KeyError:  # dulwich's reftable container raises where the API says None
            return None
        if raw is None:
            return None
        if raw.startswith(b"ref: "):
            try:
                oid = text(refs.follow(name)[1])
            except (KeyError, ValueError):
                oid = None
            return {"name": text(name), "oid": oid, "symref": text(raw[5:]), "peeled": None}
        # Repo.get_peeled: the stored peeled id, else dulwich peels through its objects.
        peeled = self.repo.get_peeled(name)
        peeled = text(peeled) if peeled is not None and peeled != raw else None
        return {"name": text(name), "oid": text(raw), "symref": None, "peeled": peeled}

    def refs(self, _req):
        refs = self.need()
        out = []
        # allkeys() also names the targets of symrefs, existing or not: ref_object drops the
        # ones that do not exist.
        for name in sorted(bytes(n) for n in refs.allkeys()):
            obj = self.ref_object(refs, name)
            if obj is not None:
                out.append(obj)
        return {"refs": out}

    def ref(self, req):
        return {"ref": self.ref_object(self.need(), req["name"].encode())}

    def reflog(self, req):
        self.need()
        entries = []
        for e in self.repo.read_reflog(req["name"].encode()):
            committer = e.committer
            name, _, email = committer.partition(b" <")
            entries.append({
                "old": text(e.old_sha), "new": text(e.new_sha),
                "name": text(name), "email": text(email.rstrip(b">")),
                "time": e.timestamp, "tz": tz_hhmm(e.timezone),
                "message": text(e.message[:-1] if e.message.endswith(b"\n") else e.message),
            })
        entries.reverse()  # dulwich yields oldest first
        # dulwich has no "reflog exists": an empty reflog and none look alike.
        return {"exists": bool(entries), "entries": entries}

    # -- writes -----------------------------------------------------------------------
    def transaction(self, req):
        refs = self.need()
        c = req["committer"]
        ident = dict(
            committer=f"{c['name']} <{c['email']}>".encode(),
            timestamp=c["time"], timezone=tz_seconds(c["tz"]),
        )
        names = [u["name"] for u in req["updates"]]
        dup = next((n for n in sorted(names) if names.count(n) > 1), None)
        if dup is not None:
            # dulwich has no transaction object to hand the list to (batch_update buffers
            # single calls, the last one winning): the request's own check is ours, as git's
            # "multiple updates for ref" is made before any ref is read.
            raise refused("name", dup, f"multiple updates for ref '{dup}' not allowed",
                          detail="duplicate")
        plans = [self.plan(refs, u) for u in req["updates"]]
        written = [p[0] for p in plans]
        dup = next((n for n in sorted(written) if written.count(n) > 1), None)
        if dup is not None:
            # Two updates reach one ref, one of them through a symref (git: "multiple
            # updates for 'X' (including one via symref 'Y') are not allowed").
            raise refused("name", text(dup), f"multiple updates for '{text(dup)}' (including "
                          "one via a symref) are not allowed", detail="duplicate")
        if len(plans) == 1:
            self.apply(refs, plans[0], ident)
            return {}
        try:
            with refs.batch_update():
                for plan in plans:
                    self.apply(refs, plan, ident)
        except Exception:
            # An aborted batch leaves dulwich's pending updates behind (FINDINGS.md):
            # start from a fresh container so they never reach a later write.
            self.reload(req)
            raise
        return {}

    def plan(self, refs, u):
        """Check what dulwich can express; return (name, new, old, message)."""
        name = u["name"]
        new, old = u.get("new", "verify"), u.get("old")
        if old == "any":
            old = None
        if isinstance(old, str) and is_null(old):
            old = "absent"
        if isinstance(new, str) and new != "verify" and is_null(new):
            new = None
        if new == "verify":
            raise unsupported("verify-only updates (dulwich has no ref check operation)")
        if old == "present" or isinstance(old, dict):
            raise unsupported(f"old value {json.dumps(old)}")
        if isinstance(new, dict) and old is not None:
            raise unsupported("a symref update with an old value (set_symbolic_ref has none)")
        if isinstance(new, dict) and not u.get("no_deref"):
            # set_symbolic_ref writes the name it is given; git writes a symref update
            # without no-deref through the symref: the last ref of the chain (existing or
            # not) becomes the symref.
            name = self.deref_name(refs, name)
        if u.get("no_deref") and not isinstance(new, dict):
            raw = self.ref_object(refs, name.encode())
            if raw is not None and raw["symref"] is not None:
                raise unsupported("no_deref on a symref (dulwich always dereferences)")
        if new is None and old == "absent":
            raise unsupported("a deletion of a ref that must not exist")
        return (name.encode(), new, old, (u.get("message") or "").encode())

    def deref_name(self, refs, name):
        """The ref at the end of name's symref chain (name itself when not a symref)."""
        for _ in range(5):  # git's limit on symref depth
            obj = self.ref_object(refs, name.encode())
            if obj is None or obj["symref"] is None:
                return name
            name = obj["symref"]
        raise unsupported(f"a symref update through a chain deeper than 5 at {name}")

    def apply(self, refs, plan, ident):
        name, new, old, message = plan
        kw = dict(ident, message=message)
        if isinstance(new, dict):
            refs.set_symbolic_ref(name, new["symref"].encode(), **kw)
            return
        expect = old.encode() if old not in (None, "absent") else None
        if new is None:
            call, ok = "remove_if_equals", refs.remove_if_equals(name, expect, **kw)
        elif old == "absent":
            call, ok = "add_if_new", refs.add_if_new(name, new.encode(), **kw)
        else:
            call, ok = "set_if_equals", refs.set_if_equals(name, expect, new.encode(), **kw)
        if not ok:
            # Say what dulwich was asked and what it reads the ref as, for the report.
            try:
                now = text(refs.read_loose_ref(name))
            except KeyError:
                now = "absent"
            want = "absent" if old == "absent" else (old or "None")
            raise refused("old-value", text(name),
                          f"dulwich declined the update (returned False): {call} with "
                          f"old={want}, the ref reads as {now}")


def hello(req):
    if req.get("protocol", PROTOCOL) != PROTOCOL:
        raise unsupported(f"protocol {req.get('protocol')}; this adapter speaks 1")
    return {
        "protocol": PROTOCOL,
        "implementation": "dulwich",
        "version": ".".join(str(p) for p in dulwich.__version__),
        "verbs": VERBS,
        "claims": ["peeled"],
        "hashes": ["sha1"],
    }


def serve(session, req):
    verb = req.get("verb")
    if verb == "hello":
        return hello(req)
    if verb == "quit":
        return {}
    if verb not in VERBS:
        raise unsupported(f"verb {verb!r}")
    return getattr(session, verb)(req)


def main():
    session = Session()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = {}
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise Answer("error", "a request must be a JSON object")
            out = dict(serve(session, req), answer="done")
        except Answer as a:
            out = dict(a.fields)
        except Exception as e:  # the implementation failed: an answer, not a crash
            traceback.print_exc(file=sys.stderr)
            out = {"answer": "error", "message": f"{type(e).__name__}: {e}"}
        if isinstance(req, dict) and "id" in req:
            out["id"] = req["id"]
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        if isinstance(req, dict) and req.get("verb") == "quit":
            break
    session.close({})
    return 0


if __name__ == "__main__":
    sys.exit(main())
