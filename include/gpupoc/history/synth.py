"""``gpupoc history synth``: a synthetic job history shaped after a published GPU-cluster trace.

The targets are the published figures in ``traces.yaml`` (InternLM/AcmeTrace data/cluster_summary.csv;
Acme: Shanghai AI Lab, Helios: SenseTime; both CC BY 4.0). How each is followed:

- GPUs, run times and queue times: fitted as ``fit.py`` states (powers of two with the published median,
  mean and maximum; lognormals with the published median and mean; run times capped at the maximum).
  They are drawn independently of each other.
- End states: completed / cancelled / failed with the published shares (renormalised to sum to 1).
- Arrivals: the trace's rate (GPU jobs / days of the trace) in bursts: sessions arrive as a Poisson
  process whose rate follows the day (``1 + 0.5 cos(2 pi (hour - 15) / 24)``, busiest at 15:00), and each
  session is one user submitting a geometric number of jobs (mean ``burst_mean``), seconds apart
  (exponential gaps, mean ``BURST_GAP_S``).
- Users: ``users`` users with Zipf-like shares (the i-th proportional to ``1 / i^zipf``); Helios-like
  histories also get ``vcs`` virtual clusters, each user in one.
- Nodes: ``ceil(gpus / gpus_per_node)``; CPUs: ``CPUS_PER_GPU`` per GPU.

Everything is written into the output's metadata (labelled synthetic, with the generator, its parameters,
the seed, the fitted distributions, the figures and their source and licence, and the figures reached).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.history.fit import LogNormal, PowersOfTwo, zipf_weights
from gpupoc.history.formats.values import parse_zone
from gpupoc.history.model import JobRecord, JobState
from gpupoc.history.stats import figures
from gpupoc.history.table import History

TRACES_FILE = Path(__file__).with_name("traces.yaml")
BURST_GAP_S = 20.0
CPUS_PER_GPU = 16
DIURNAL_AMPLITUDE = 0.5
PEAK_HOUR = 15.0
_STATE_ORDER = (JobState.COMPLETED, JobState.CANCELLED, JobState.FAILED)


@dataclass(frozen=True)
class SynthParams:
    like: str
    jobs: int
    seed: int
    max_gpus: int | None = None
    gpus_per_node: int = 8
    users: int = 40
    zipf: float = 1.1
    vcs: int = 8
    burst_mean: float = 3.0
    single_gpu_share: float = 0.6
    start: str | None = None


def load_traces(path: Path = TRACES_FILE) -> dict[str, dict]:
    """Each published trace's figures, by name (``--like``)."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["traces"]


def trace(name: str) -> dict:
    traces = load_traces()
    if name not in traces:
        raise ConfigError("--like", [f"--like: unknown trace {name!r}; one of {', '.join(traces)}"])
    return traces[name]


def synthesize(params: SynthParams) -> History:
    """A history of ``params.jobs`` GPU jobs like ``params.like``, reproducible from ``params.seed``."""
    _check(params)
    pub = trace(params.like)
    rng = np.random.default_rng(params.seed)
    n = params.jobs
    gpus_fit = PowersOfTwo.fit(pub["gpus"]["mean"], pub["gpus"]["max"], params.single_gpu_share)
    gpus_dist = gpus_fit.capped(params.max_gpus)
    run = LogNormal.from_median_mean(pub["run_seconds"]["median"], pub["run_seconds"]["mean"],
                                     cap=pub["run_seconds"]["max"])
    queue = LogNormal.from_median_mean(pub["queue_seconds"]["median"], pub["queue_seconds"]["mean"])
    shares = np.array([pub["states"][s.value] for s in _STATE_ORDER], dtype=float)
    shares /= shares.sum()

    zone = parse_zone(pub["timezone"])
    start = datetime.fromisoformat(params.start or pub["period"]["start"])
    start = start if start.tzinfo else start.replace(tzinfo=zone)
    rate_per_day = pub["gpu_jobs"] / pub["period"]["days"]
    offsets, user_index = _arrivals(rng, n, rate_per_day, params, start)
    gpus = gpus_dist.sample(rng, n)
    runs = np.maximum(np.rint(run.sample(rng, n)), 1)
    waits = np.maximum(np.rint(queue.sample(rng, n)), 0)
    states = rng.choice(len(_STATE_ORDER), size=n, p=shares)

    users = [_hashed("u", params, i) for i in range(params.users)]
    vcs = [_hashed("vc", params, i) for i in range(params.vcs)] if pub["format"] == "helios" else None
    records = []
    for i in range(n):
        submit = (start + timedelta(seconds=float(offsets[i]))).astimezone(zone).replace(microsecond=0)
        begin = submit + timedelta(seconds=float(waits[i]))
        end = begin + timedelta(seconds=float(runs[i]))
        g = int(gpus[i])
        state = _STATE_ORDER[int(states[i])]
        records.append(JobRecord(
            job_id=f"syn-{params.like}-{i + 1:06d}", submit_time=submit, gpu_num=g, state=state,
            state_raw=state.value.upper(), source_row=i + 2, node_num=math.ceil(g / params.gpus_per_node),
            user=users[user_index[i]], vc=vcs[user_index[i] % len(vcs)] if vcs else None,
            cpu_num=g * CPUS_PER_GPU, start_time=begin, end_time=end, duration_s=float(runs[i]),
            queue_s=float(waits[i]),
        ))
    history = History(records=records, timezone=pub["timezone"])
    history.metadata = _metadata(params, pub, gpus_fit, gpus_dist, run, queue, shares, rate_per_day, history)
    return history


def _check(p: SynthParams) -> None:
    errors = []
    if p.jobs < 1:
        errors.append(f"--jobs: expected a positive integer, got {p.jobs}")
    if p.max_gpus is not None and p.max_gpus < 1:
        errors.append(f"--max-gpus: expected a positive integer, got {p.max_gpus}")
    for name, value in (("--users", p.users), ("--vcs", p.vcs), ("--gpus-per-node", p.gpus_per_node)):
        if value < 1:
            errors.append(f"{name}: expected a positive integer, got {value}")
    if p.burst_mean < 1:
        errors.append(f"--burst-mean: expected a number >= 1 (jobs per session), got {p.burst_mean}")
    if not 0.5 <= p.single_gpu_share < 1:
        errors.append(f"--single-gpu-share: expected a share in [0.5, 1) (the median is 1 GPU), "
                      f"got {p.single_gpu_share}")
    if errors:
        raise ConfigError("history synth", errors)


def _arrivals(rng, n: int, rate_per_day: float, p: SynthParams, start: datetime):
    """Submission offsets (seconds from ``start``, sorted) and each job's user index."""
    session_rate = rate_per_day / p.burst_mean / 86400.0
    peak = session_rate * (1 + DIURNAL_AMPLITUDE)
    hour0 = start.hour + start.minute / 60
    user_share = zipf_weights(p.users, p.zipf)
    offsets: list[float] = []
    users: list[int] = []
    t = 0.0
    while len(offsets) < n:
        t += rng.exponential(1 / peak)
        hour = (hour0 + t / 3600) % 24
        rate = 1 + DIURNAL_AMPLITUDE * math.cos(2 * math.pi * (hour - PEAK_HOUR) / 24)
        if rng.random() * (1 + DIURNAL_AMPLITUDE) > rate:  # thinning: keep with probability rate / peak
            continue
        user = int(rng.choice(p.users, p=user_share))
        at = t
        for _ in range(int(rng.geometric(1 / p.burst_mean))):
            offsets.append(at)
            users.append(user)
            at += rng.exponential(BURST_GAP_S)
    order = np.argsort(offsets[:n], kind="stable")
    return np.array(offsets[:n])[order], np.array(users[:n])[order]


def _hashed(prefix: str, p: SynthParams, i: int) -> str:
    return prefix + hashlib.sha256(f"{p.like}-{p.seed}-{prefix}-{i}".encode()).hexdigest()[:5]


def command(p: SynthParams) -> str:
    """The command line that reproduces ``p``."""
    defaults = SynthParams(like=p.like, jobs=p.jobs, seed=p.seed)
    parts = [f"gpupoc history synth --like {p.like} --jobs {p.jobs} --seed {p.seed}"]
    for name, value in asdict(p).items():
        if name not in ("like", "jobs", "seed") and value != getattr(defaults, name):
            parts.append(f"--{name.replace('_', '-')} {value}")
    return " ".join(parts)


def _metadata(p, pub, gpus_fit, gpus_dist, run, queue, shares, rate_per_day, history) -> dict:
    assumptions = [
        f"one-GPU jobs: {p.single_gpu_share:.0%} (the published median of 1 GPU only says at least 50%)",
        "GPUs, run time, queue time and end state are drawn independently of each other",
        f"nodes per job: ceil(GPUs / {p.gpus_per_node}); CPUs: {CPUS_PER_GPU} per GPU",
        f"arrivals: sessions of mean {p.burst_mean} jobs ({BURST_GAP_S:.0f} s apart on average), "
        f"Poisson with a daily cycle (amplitude {DIURNAL_AMPLITUDE}, busiest at {PEAK_HOUR:.0f}:00)",
        f"users: {p.users} with Zipf shares (exponent {p.zipf})",
    ]
    if gpus_dist is not gpus_fit:
        assumptions.append(f"GPUs capped at {p.max_gpus} (published maximum {pub['gpus']['max']}): the fitted shape "
                           f"below the cap, renormalised; the mean falls to {gpus_dist.mean:.2f}")
    if pub["queue_seconds"]["median"] == 0:
        assumptions.append("a published median queue of 0 s is fitted as 0.25 s, so most waits round to 0")
    return {
        "kind": "gpupoc job history",
        "synthetic": True,
        "generator": "gpupoc history synth (gpupoc.history.synth)",
        "command": command(p),
        "parameters": asdict(p),
        "seed": p.seed,
        "like": p.like,
        "figures": {k: pub[k] for k in ("gpu_jobs", "gpus", "run_seconds", "queue_seconds", "states", "period")},
        "figures_source": pub["source"],
        "licence": "CC BY 4.0",
        "fit": {
            "gpus": gpus_dist.to_dict() | {"fitted_before_cap": gpus_fit.to_dict()},
            "run_seconds": run.to_dict(),
            "queue_seconds": queue.to_dict(),
            "states": {s.value: round(float(x), 6) for s, x in zip(_STATE_ORDER, shares)},
            "arrivals": {"jobs_per_day": round(rate_per_day, 3), "burst_mean": p.burst_mean,
                         "burst_gap_seconds": BURST_GAP_S, "diurnal_amplitude": DIURNAL_AMPLITUDE,
                         "peak_hour": PEAK_HOUR},
            "users": {"count": p.users, "zipf_exponent": p.zipf, "vcs": p.vcs if pub["format"] == "helios" else None},
        },
        "assumptions": assumptions,
        "reached": figures(history.records).to_dict(),
        "format": pub["format"],
    }
