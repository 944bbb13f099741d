"""Which signals a Slurm batch job's processes get, and when (docs/slurm-notes.md), on the Slurm test cluster.

usage (root, from the repository root):
    PYTHONPATH=$PWD python benchmarks/slurm_signals.py SCENARIO [--kill-wait 5] [--conf-extra LINE] [-- SBATCH OPTIONS]

The job (2 nodes × 1 task) is a bash batch script that traps TERM USR1 USR2 CONT HUP INT, with a direct child of
the script and a 2-task step (`srun -N2 -n2`), both this file run as a recorder that logs every catchable signal;
all three write a heartbeat every 0.1 s, so the last heartbeat tells when SIGKILL came. SCENARIO is done to the
running job, and every event is printed in seconds from that moment (from the script's start for `timeout`):

    scancel | scancel-usr1 (scancel --signal=USR1) | scancel-b-usr1 (-b) | scancel-f-usr1 (-f) | requeue
    (scontrol requeue, then waits for the restart) | timeout (give --time and --signal after --)

e.g. `… slurm_signals.py timeout -- --time=1 --signal=B:USR1@30` (about 95 s).
"""

import argparse
import glob
import os
import signal
import socket
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

SCRIPT = """#!/bin/bash
L={log}
for s in TERM USR1 USR2 CONT HUP INT; do trap "echo \\$(date +%s.%3N) batch-shell $s >> $L" $s; done
echo "$(date +%s.%3N) batch-shell start restart=${{SLURM_RESTART_COUNT:-0}}" >> $L
{python} {me} --record child $L &
srun -N2 -n2 {python} {me} --record step $L &
while :; do date +%s.%3N > "$L.batch.run${{SLURM_RESTART_COUNT:-0}}.alive"; sleep 0.1; done
"""
SCENARIOS = {"scancel": [], "scancel-usr1": ["--signal=USR1"], "scancel-b-usr1": ["-b", "--signal=USR1"],
             "scancel-f-usr1": ["-f", "--signal=USR1"], "requeue": None, "timeout": None}


def record(label, log):
    """The recorder: log every catchable signal, and a heartbeat, until SIGKILL."""
    who = f"{label}@{socket.gethostname()}:{os.environ.get('SLURM_PROCID', '-')}"

    def write(text):
        with open(log, "a") as out:
            out.write(f"{time.time():.3f} {who} {text}\n")
    for name in ("SIGHUP", "SIGINT", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGTERM", "SIGCONT", "SIGALRM", "SIGPIPE"):
        signal.signal(getattr(signal, name), lambda sig, frame: write(signal.Signals(sig).name))
    write(f"start restart={os.environ.get('SLURM_RESTART_COUNT', '0')}")
    alive = (f"{log}.{label}.{socket.gethostname()}.{os.environ.get('SLURM_PROCID', '-')}"
             f".run{os.environ.get('SLURM_RESTART_COUNT', '0')}.alive")
    while True:
        with open(alive, "w") as out:
            out.write(f"{time.time():.3f}\n")
        time.sleep(0.1)


def events(log, t0):
    lines = []
    for line in open(log).read().splitlines():
        t, rest = line.split(" ", 1)
        lines.append((float(t) - t0, rest))
    for alive in glob.glob(log + ".*.alive"):
        text = open(alive).read().strip()
        if text:   # empty: killed while writing it
            lines.append((float(text) - t0, f"last heartbeat of {alive[len(log) + 1:-6]}"))
    return "\n".join(f"  {t:+8.2f} s  {what}" for t, what in sorted(lines))


def wait_started(log, restart=0, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = open(log).read() if os.path.exists(log) else ""
        if text.count(f"start restart={restart}") >= 4:   # batch shell, child, 2 step tasks
            return min(float(line.split()[0]) for line in text.splitlines() if f"start restart={restart}" in line)
        time.sleep(0.1)
    raise SystemExit(f"the job did not start (restart {restart}) within {timeout} s:\n{text}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--record":
        return record(sys.argv[2], sys.argv[3])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--kill-wait", type=int, default=5, help="slurm.conf KillWait (Slurm's default: 30)")
    parser.add_argument("--conf-extra", default="", help="more slurm.conf lines, ';' between them, {base} allowed")
    parser.add_argument("sbatch", nargs="*", help="sbatch options (after --)")
    args = parser.parse_args()
    from quadsel.testbed.slurm import SlurmCluster
    with SlurmCluster(2, kill_wait=args.kill_wait, conf_extra=args.conf_extra.replace(";", "\n")) as cluster:
        log = str(cluster.base / "jobs" / "signals.log")
        script = SCRIPT.format(log=log, python=sys.executable, me=os.path.abspath(__file__))
        options = ["-N2", "--ntasks-per-node=1", *args.sbatch]
        submitted = time.time()
        job = cluster.sbatch(script, *options)
        started = wait_started(log)
        print(f"# {args.scenario}: KillWait={args.kill_wait}, sbatch {' '.join(options)}: job {job}, "
              f"started {started - submitted:.2f} s after submission")
        if args.scenario == "timeout":
            info = cluster.wait(job, timeout=600)
            t0 = started
            print(f"# from the script's start; final JobState={info['JobState']} Restarts={info['Restarts']} "
                  f"RunTime={info['RunTime']} TimeLimit={info['TimeLimit']}")
        else:
            time.sleep(1)
            t0 = time.time()
            if args.scenario == "requeue":
                cluster.run(["scontrol", "requeue", str(job)], check=True)
                restarted = wait_started(log, restart=1, timeout=600)
                print(f"# from `scontrol requeue {job}`; restarted {restarted - t0:.2f} s later, same job id, "
                      f"Restarts={cluster.job(job).get('Restarts')}")
            else:
                cluster.scancel(job, *SCENARIOS[args.scenario])
                print(f"# from `scancel {' '.join(SCENARIOS[args.scenario])} {job}`")
                if SCENARIOS[args.scenario]:   # a signal only: the job runs on
                    time.sleep(2)
                    print(f"# 2 s later: JobState={cluster.job(job).get('JobState')}; then a plain scancel")
            if cluster.job(job).get("JobState") not in ("CANCELLED", "COMPLETED"):
                cluster.scancel(job)
            cluster.wait(job, timeout=120)
        time.sleep(0.5)
        print(events(log, t0))


if __name__ == "__main__":
    main()
