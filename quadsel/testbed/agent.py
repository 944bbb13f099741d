"""The launcher's remote agent of a namespace cluster: a small sh script that stands in for ssh.

MPI launchers start their remote daemons as `AGENT [ssh options] HOST COMMAND...` (Open MPI's
`plm_ssh_agent`, MPICH's `-launcher-exec`, Intel MPI's `-bootstrap-exec`). The agent does what ssh would:

- skips the leading options, parsed with ssh's own option string (so `-o X`, `-p N`, `-l user`, `-oX` and
  grouped flags such as `-qx` are all consumed as ssh consumes them), and a `user@` before the host;
- joins the remaining words with spaces and hands that string to a shell on the host (`sh -c`), exactly as
  ssh hands it to the remote login shell: launchers quote their words for that shell (PRRTE sends
  `VAR=...;export VAR;.../prted ... "a;b"`), so the words must not be passed through verbatim;
- runs it with a login-like environment: only the variables of `KEEP_ENV` survive, as on a cluster whose
  shell start-up sets PATH and friends alike on every node. Everything else (OMPI_*, I_MPI_*, FI_*, UCX_*,
  QUADSEL_*) must be forwarded by the launcher, as on a real cluster: Open MPI forwards only what `-x` names,
  Hydra forwards the whole environment.

On the host it enters the host's network namespace with a UTS namespace of its own (the host's hostname) and a
mount namespace of its own, in which the host's own boot id is bind-mounted over
/proc/sys/kernel/random/boot_id: UCX (MPICH's default netmod) decides that two processes share a machine by
the boot id, and would otherwise move data between "hosts" through shared memory.

It is one executable file, because Intel MPI's `-bootstrap-exec` does not split its value into words.
`QUADSEL_AGENT_DRY_RUN=1` in its environment runs the command here, without entering the host (its namespace
and hostname are printed on stderr): the option parsing and quoting can be tested without root.
"""

import os
import shlex

# ssh's getopt string (OpenSSH ssh.c): a letter followed by ":" takes a value.
SSH_OPTIONS = "1246ab:c:e:fgi:kl:m:no:p:qstvxACD:E:F:GI:J:KL:MNO:P:Q:R:S:TVw:W:XYy"

# What a login shell on a cluster node would have: set by the system or by the user's start-up files, the same
# on every node of a shared home.
KEEP_ENV = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "VIRTUAL_ENV", "HOME", "USER", "LOGNAME", "SHELL",
            "LANG", "LC_ALL", "TMPDIR")

# Entering a host: its hostname, its boot id over the machine's, then the command. $1 hostname, $2 the boot id
# file; the agent gives the command as $3 (a shell string, as ssh does), on_host as the remaining words.
ENTER = 'hostname "$1" && mount --bind "$2" /proc/sys/kernel/random/boot_id'
BOOT_ID = "/proc/sys/kernel/random/boot_id"

_TEMPLATE = r"""#!/bin/sh
# Remote agent of the quadsel namespace cluster {cluster}: stands in for ssh (see quadsel/testbed/agent.py).
# Usage: {name} [ssh options] [user@]HOST COMMAND...   HOST: an address or hostname of the cluster.
stdin_null=
while getopts ":{options}" opt; do
    case $opt in
        n) stdin_null=1 ;;
        :) echo "{name}: option -$OPTARG needs a value" >&2; exit 255 ;;
        *) ;;   # any other ssh option, or one ssh does not know: no meaning here
    esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ]; then
    echo "usage: {name} [ssh options] [user@]HOST COMMAND..." >&2
    exit 255
fi
host=${{1##*@}}
shift
case $host in
{cases}    *) echo "{name}: $host is not a host of the namespace cluster {cluster}" >&2; exit 255 ;;
esac
if [ $# -lt 1 ]; then
    echo "{name}: no command for $host (a login shell is not offered)" >&2
    exit 255
fi
IFS=' '
command="$*"
if [ -n "$stdin_null" ]; then
    exec </dev/null
fi
if [ -n "${{QUADSEL_AGENT_DRY_RUN:-}}" ]; then
    printf '%s %s\n' "$ns" "$hostname" >&2
    exec sh -c "$command"
fi
exec env -i {keep} \
    ip netns exec "$ns" unshare --uts --mount \
    sh -c '{enter} && exec sh -c "$3"' sh "$hostname" "$boot_id" "$command"
"""


def agent_script(cluster, hosts, name="agent", keep_env=KEEP_ENV):
    """The agent's text. hosts: objects with .address, .hostname, .netns and .boot_id_file."""
    cases = []
    for host in hosts:
        cases.append(f"    {_case_word(host.address)}|{_case_word(host.hostname)})\n"
                     f"        ns={shlex.quote(host.netns)} hostname={shlex.quote(host.hostname)} "
                     f"boot_id={shlex.quote(str(host.boot_id_file))} ;;\n")
    keep = " ".join(f'${{{v}+"{v}=${v}"}}' for v in keep_env if v.isidentifier())
    return _TEMPLATE.format(cluster=cluster, name=name, options=SSH_OPTIONS, cases="".join(cases), keep=keep,
                            enter=ENTER)


def write_agent(path, cluster, hosts, keep_env=KEEP_ENV):
    """Write the agent to `path` as an executable file (mode 0755) and return the path."""
    text = agent_script(cluster, hosts, name=os.path.basename(str(path)), keep_env=keep_env)
    with open(path, "w") as out:
        out.write(text)
    os.chmod(path, 0o755)
    return path


def on_host_argv(host, argv):
    """argv run on `host` exactly as given (no shell between), with the caller's environment: as if logged in
    there with one's own environment. The way to start the launcher itself on the first host."""
    return ["ip", "netns", "exec", host.netns, "unshare", "--uts", "--mount",
            "sh", "-c", ENTER + ' && shift 2 && exec "$@"', "sh", host.hostname, str(host.boot_id_file),
            *map(str, argv)]


def remote_command(argv):
    """The one string to give the agent (or ssh) so that the host runs exactly these words."""
    return shlex.join(str(a) for a in argv)


def _case_word(text):
    # addresses and hostnames are checked to be plain ([A-Za-z0-9.-]), but quote anyway: a case pattern
    return shlex.quote(text)
