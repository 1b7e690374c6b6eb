#!/usr/bin/env python3
"""dulwich writes a made-up restart table: RefBlock._create_embedded_footer always writes
two restart points, the second at the block's second record, whether or not that record
is written in full (prefix length 0). When the second record shares a prefix with the
first (no HEAD in the table: refs/heads/aaa, refs/heads/b) the restart point lands on a
prefix-compressed record, and git, which binary-searches the restart points, dies
(SIGABRT in 2.47.3) on every read of the stack.

Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
git.run("update-ref", "--no-deref", "-d", "HEAD")
r = Repo(gitdir)
main = r.refs[b"refs/heads/main"]
with r.refs.batch_update():
    r.refs.add_if_new(b"refs/heads/b", main)
p = git.run("for-each-ref", "--format=%(refname)", check=False)
q = git.run("rev-parse", "--verify", "-q", "refs/heads/b", check=False)
fine = p.returncode == 0 and "refs/heads/b" in p.stdout.split() and q.returncode == 0
verdict(not fine,
        f"dulwich {version}: after a batch write git for-each-ref exits {p.returncode}, "
        f"git rev-parse refs/heads/b exits {q.returncode}")
