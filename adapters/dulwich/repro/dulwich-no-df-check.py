#!/usr/bin/env python3
"""dulwich does not check directory/file conflicts: add_if_new(refs/heads/main/sub) is
written while refs/heads/main exists (git refuses: 'refs/heads/main' exists; cannot create
'refs/heads/main/sub'), and so is refs/heads/topic/x beside refs/heads/topic in one batch.
No name-availability check anywhere in ReftableRefsContainer.

Exit 1 while the defect shows.
"""
from _repo import dulwich_repo, reftable_repo, verdict

Repo, version = dulwich_repo()
git, gitdir = reftable_repo()
r = Repo(gitdir)
main = r.refs[b"refs/heads/main"]
ok = r.refs.add_if_new(b"refs/heads/main/sub", main)
listed = git.out("for-each-ref", "--format=%(refname)", "refs/heads/").split()
both = "refs/heads/main" in listed and "refs/heads/main/sub" in listed
verdict(ok or both,
        f"dulwich {version}: add_if_new(refs/heads/main/sub) returned {ok}; git lists "
        f"{', '.join(n for n in listed if n.startswith('refs/heads/main'))}")
