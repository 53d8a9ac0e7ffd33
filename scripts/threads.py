#!/usr/bin/env python3
# scripts/threads.py CMD... (BENCHMARKS.md, "16 cores: a mixed tree, and the thread that runs alone").
# Per-thread CPU of a command: samples /proc/PID/task/*/stat every 5 ms and
# prints each thread's last utime+stime (ms) by name, and the wall time.
import os, subprocess, sys, time
tick = os.sysconf("SC_CLK_TCK")
t0 = time.time()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
last = {}
while p.poll() is None:
    try:
        for t in os.listdir(f"/proc/{p.pid}/task"):
            try:
                s = open(f"/proc/{p.pid}/task/{t}/stat").read()
            except OSError:
                continue
            name = s[s.index("(") + 1 : s.rindex(")")]
            f = s[s.rindex(")") + 2 :].split()
            last[t] = (name, (int(f[11]) + int(f[12])) * 1000 // tick)
    except OSError:
        pass
    time.sleep(0.005)
wall = int((time.time() - t0) * 1000)
groups = {}
for name, ms in last.values():
    g = groups.setdefault(name, [])
    g.append(ms)
print(f"wall {wall} ms; " + "; ".join(f"{n} x{len(v)}: {sum(v)} ms (max {max(v)})" for n, v in sorted(groups.items())))
