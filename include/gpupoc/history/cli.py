"""``gpupoc history import|synth|plan|stats``: job histories in, replay waves out."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpupoc.exceptions import ConfigError


def register(subparsers) -> None:
    """Add the ``history`` area to the top-level ``gpupoc`` parser."""
    from gpupoc.history.formats import FORMATS

    history = subparsers.add_parser("history", help="import, synthesise and replay job histories")
    sub = history.add_subparsers(dest="history_command", required=True)

    imp = sub.add_parser("import", help="read a job history into the typed job table")
    _source_args(imp, format_required=True)
    size = imp.add_mutually_exclusive_group()
    size.add_argument("--cluster-gpus", type=int, help="count jobs larger than this many GPUs as not replayable")
    size.add_argument("--plan", help="count jobs the plan's pools cannot run as not replayable")
    imp.add_argument("--errors", help="write every bad row's error to this file")
    imp.add_argument("--out", help="write the table here (.parquet)")
    imp.set_defaults(func=cmd_import)

    syn = sub.add_parser("synth", help="generate a synthetic history shaped after a published trace")
    syn.add_argument("--like", required=True, help="kalos, seren or helios")
    syn.add_argument("--jobs", type=int, required=True)
    syn.add_argument("--seed", type=int, required=True)
    syn.add_argument("--max-gpus", type=int, help="largest job (e.g. the replay cluster's largest pool)")
    syn.add_argument("--gpus-per-node", type=int, default=8)
    syn.add_argument("--users", type=int, default=40)
    syn.add_argument("--vcs", type=int, default=8, help="virtual clusters (helios only)")
    syn.add_argument("--burst-mean", type=float, default=3.0, help="mean jobs a user submits at once")
    syn.add_argument("--single-gpu-share", type=float, default=0.6, help="share of one-GPU jobs (>= 0.5)")
    syn.add_argument("--start", help="first possible submission (ISO 8601); default: the trace's start")
    syn.add_argument("--out", help="write the history here: .csv in the trace's format (with a .meta.json), "
                     "or .parquet; without it only the figures are printed")
    syn.set_defaults(func=cmd_synth)

    plan = sub.add_parser("plan", help="turn a window of a history into a replay wave for a plan")
    plan.add_argument("file", help="a .parquet table (import/synth), or any history with --format")
    plan.add_argument("--format", choices=FORMATS, help="read FILE in this format (not needed for .parquet)")
    plan.add_argument("--columns", help="--format csv: field=Column,...")
    plan.add_argument("--timezone", default="UTC", help="zone of times without an offset (default UTC)")
    plan.add_argument("--skip-bad-rows", action="store_true", help="with --format: leave bad rows out (counted)")
    which = plan.add_mutually_exclusive_group(required=True)
    which.add_argument("--window", help="START/END (ISO 8601): jobs submitted in [START, END)")
    which.add_argument("--first", type=int, help="from the first job to the N-th job the plan's cluster can run")
    plan.add_argument("--compress", type=float, required=True, help="divide durations and arrival times by this")
    plan.add_argument("--plan", dest="plan_file", required=True, help="the POC plan (tenants, pools, priorities)")
    plan.add_argument("--class", dest="test_class", default="queue_congestion")
    plan.add_argument("--group-by", choices=("user", "vc"), help="default: vc when the history has vcs")
    plan.add_argument("--min-duration", type=float, default=1.0, help="shortest pod run time in seconds")
    plan.add_argument("--short-run", type=float, default=300.0, help="history run time below which the "
                      "lowest priority class is chosen (seconds)")
    plan.add_argument("--cut-share", type=float, default=0.5, help="cancelled/timed-out jobs are cut at this "
                      "share of their pod's run")
    plan.add_argument("--out", help="write the wave's YAML here (else it is printed)")
    plan.set_defaults(func=cmd_plan)

    stats = sub.add_parser("stats", help="print a history's figures (medians, means, state shares)")
    _source_args(stats, format_required=False)
    stats.set_defaults(func=cmd_stats)


def _source_args(p: argparse.ArgumentParser, format_required: bool) -> None:
    from gpupoc.history.formats import FORMATS

    p.add_argument("file")
    p.add_argument("--format", choices=FORMATS, required=format_required)
    p.add_argument("--columns", help="--format csv: field=Column,... (e.g. job_id=JobId,gpu_num=GPUs)")
    p.add_argument("--timezone", default="UTC", help="zone of times without an offset (default UTC)")
    p.add_argument("--skip-bad-rows", action="store_true", help="import the good rows; bad ones are counted")


def cmd_import(args: argparse.Namespace) -> int:
    from gpupoc.history.cluster import ClusterShape
    from gpupoc.history.importer import import_history
    from gpupoc.history.table import write_parquet

    cluster = None
    if args.cluster_gpus is not None:
        if args.cluster_gpus < 1:
            raise ConfigError("--cluster-gpus",
                              [f"--cluster-gpus: expected a positive integer, got {args.cluster_gpus}"])
        cluster = ClusterShape.of_gpus(args.cluster_gpus)
    elif args.plan:
        from gpupoc.plan.loader import load_plan

        cluster = ClusterShape.from_plan(load_plan(args.plan))
    result = import_history(args.file, args.format, columns=args.columns, timezone=args.timezone, cluster=cluster,
                            skip_bad_rows=args.skip_bad_rows, errors_file=args.errors)
    print("\n".join(result.summary()))
    if args.out:
        print(f"wrote {write_parquet(_parquet(args.out), result.history)}")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from gpupoc.history.formats.writer import write_trace_csv
    from gpupoc.history.stats import comparison
    from gpupoc.history.synth import SynthParams, synthesize
    from gpupoc.history.table import write_parquet, write_sidecar

    params = SynthParams(like=args.like, jobs=args.jobs, seed=args.seed, max_gpus=args.max_gpus,
                         gpus_per_node=args.gpus_per_node, users=args.users, vcs=args.vcs,
                         burst_mean=args.burst_mean, single_gpu_share=args.single_gpu_share, start=args.start)
    history = synthesize(params)
    meta = history.metadata
    print(f"{args.jobs} synthetic jobs like {args.like} (seed {args.seed}); figures from {meta['figures_source']}")
    print("\n".join(comparison(meta["reached"], meta["figures"])))
    for line in meta["assumptions"]:
        print(f"  assumption: {line}")
    if not args.out:
        print("(no --out: nothing written)")
        return 0
    out = Path(args.out)
    if out.suffix == ".parquet":
        print(f"wrote {write_parquet(out, history)}")
    elif out.suffix == ".csv":
        print(f"wrote {write_trace_csv(out, history, meta['format'])} ({meta['format']} columns) and "
              f"{write_sidecar(out, meta | {'timezone': history.timezone})}")
    else:
        raise ConfigError("--out", [f"--out: expected a .csv or .parquet file, got {args.out!r}"])
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from gpupoc.history.plan_wave import WaveOptions, parse_window, plan_wave
    from gpupoc.history.replay import render_yaml
    from gpupoc.plan.loader import load_plan

    plan = load_plan(args.plan_file)
    path = Path(args.file)
    if args.window and not args.format and path.suffix == ".parquet":  # read only the window's jobs
        from gpupoc.evidence.writer import sha256_file
        from gpupoc.history.replay import wave_source
        from gpupoc.history.table import parquet_zone, read_parquet

        window = parse_window(args.window, parquet_zone(path))
        history = read_parquet(path, submitted=window)
        source = wave_source(path, history, sha256_file(path))
    else:
        history, source = _load(args)
        window = parse_window(args.window, history.timezone) if args.window else None
    options = WaveOptions(
        compression=args.compress, first=args.first, group_by=args.group_by, test_class=args.test_class,
        window=window,
        min_duration_s=args.min_duration, short_run_s=args.short_run, cut_share=args.cut_share,
    )
    wave = plan_wave(history, plan, options, source)
    print("\n".join(wave_summary(wave)))
    header = (f"Replay wave of {args.file} for plan {plan.name!r} ({args.test_class}), compressed {args.compress:g}x.\n"
              "Written by `gpupoc history plan`; load it with gpupoc.history.replay.load_wave.")
    text = render_yaml(wave, header)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(text, end="")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from gpupoc.history.stats import figures

    history, _ = _load(args)
    for key, value in figures(history.records).to_dict().items():
        print(f"{key}: {value}")
    return 0


def wave_summary(wave) -> list[str]:
    """The tenant mapping, what was dropped and why, and the wave's size and span (printed by ``plan``)."""
    lines = [f"{wave.jobs_replayed} of {wave.jobs_in_window} jobs in the window replayed "
             f"({wave.selection.window_start} .. {wave.selection.window_end}), compressed {wave.compression:g}x: "
             f"the last release {wave.span_seconds:.0f} s after the start"]
    for reason, count in wave.dropped.items():
        lines.append(f"  dropped: {count} {reason}")
    if wave.floored_durations:
        lines.append(f"  run times raised to {wave.min_duration_seconds:g} s: {wave.floored_durations}")
    lines.append(f"{wave.group_by} -> tenant (by GPU time, most first):")
    for m in wave.tenant_mapping:
        moved = "".join(f"; {n} jobs too large for it -> {t}" for t, n in m.moved.items())
        lines.append(f"  {m.group} -> {m.tenant}: {m.jobs} jobs, {m.share:.1%} of the GPU time{moved}")
    for name, s in wave.tenant_shares.items():
        lines.append(f"  {name}: target {s.target:.1%}, replayed {s.replayed:.1%}, {s.items} items, "
                     f"peak {s.peak_gpus} GPUs if all started on arrival (quota {s.quota_gpus})")
    return lines


def _load(args: argparse.Namespace):
    """The history of ``args.file`` (parquet, or any format with --format) and its source description."""
    from gpupoc.evidence.writer import sha256_file
    from gpupoc.history.importer import import_history
    from gpupoc.history.replay import wave_source
    from gpupoc.history.table import read_parquet

    path = Path(args.file)
    if args.format:
        history = import_history(path, args.format, columns=args.columns, timezone=args.timezone,
                                 skip_bad_rows=args.skip_bad_rows).history
    elif path.suffix == ".parquet":
        history = read_parquet(path)
    else:
        raise ConfigError(str(path), ["(file): not a .parquet table; pass --format (one of acme, helios, sacct, "
                                      "csv) to read it"])
    return history, wave_source(path, history, sha256_file(path))


def _parquet(path: str) -> Path:
    p = Path(path)
    if p.suffix != ".parquet":
        raise ConfigError("--out", [f"--out: the table is written as parquet; name it *.parquet, got {path!r}"])
    return p
