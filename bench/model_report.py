"""The benchmark of record's output (bench/models.py): verdicts, the per-part markdown tables
(mamba_ssm, ssmtune untuned and tuned side by side), and issue 14's targets read off a run."""
import compare
from model_shapes import FLAGS_TEXT

CONTENDERS = ("mamba_ssm", "untuned", "tuned")  # run (and shown) in this order
VERDICT_ORDER = ("at-limit", "inside", "outside", "defect")
FAILED = ("outside", "defect")


def worst(verdicts):
    known = [v for v in verdicts if v in VERDICT_ORDER]
    return max(known, key=VERDICT_ORDER.index) if known else "n/a"


PARTS = {"fwd": "Forward", "bwd": "Backward", "step": "Training step (forward + backward)"}


def part_of(rec, name, part):
    return (rec["contenders"].get(name) or {}).get(part) or {}


def part_ms(rec, name, part):
    timing = part_of(rec, name, part).get("timing")
    return timing["median_ms"] if timing else None


def ms_cell(rec, name, part):
    ms = part_ms(rec, name, part)
    if ms is not None:
        return f"{ms:.4g}"
    res = rec["contenders"].get(name) or {}
    status = part_of(rec, name, part).get("status") or res.get("status")
    return status if status in ("error", "defect") else "n/a"


def ratio(a, b):
    return a / b if a and b else None


def x_cell(value):
    return "n/a" if value is None else f"{value:.2f}x"


def verdict_of(rec, name, part):
    if part == "step":
        parts = [verdict_of(rec, name, p) for p in ("fwd", "bwd")]
        return worst(parts) if all(p in VERDICT_ORDER for p in parts) else "n/a"
    acc = part_of(rec, name, part).get("accuracy")
    if acc:
        return acc["verdict"]
    return "error" if (rec["contenders"].get(name) or {}).get("status") == "error" else "n/a"


def tune_results(rec, part):
    tune = (rec["contenders"].get("tuned") or {}).get("tune") or {}
    prefixes = {"fwd": ("fwd:",), "bwd": ("bwd:",), "step": ("fwd:", "bwd:")}[part]
    return [r for k, r in tune.items() if k.startswith(prefixes)]


def tune_cell(rec, part):
    results = tune_results(rec, part)
    if not results:
        return "n/a"
    if any(r.get("error") for r in results):
        return "error"
    text = (f"{sum(r.get('wall_s') or 0 for r in results):.1f} s / "
            f"{sum(r.get('timed') or 0 for r in results)}")
    if any(r.get("cut_short") for r in results):
        text += " cut short"
    if any(r.get("earlier") for r in results):
        text += " (earlier run)"
    return text


def config_cell(rec, part):
    tuned = rec["contenders"].get("tuned") or {}
    if part == "fwd" and tuned.get("config"):
        return tuned["config"]
    configs = [r.get("config") for r in tune_results(rec, part) if r.get("config")]
    return " + ".join(configs) if configs else "n/a"


def row_numbers(rec, part):
    m, u, t = (part_ms(rec, n, part) for n in CONTENDERS)
    floor = rec["floor_ms"][part]
    return {"mamba": m, "untuned": u, "tuned": t, "untuned_vs_mamba": ratio(m, u),
            "tuned_vs_mamba": ratio(m, t), "untuned_over_tuned": ratio(u, t),
            "floor": floor, "tuned_x_floor": ratio(t, floor)}


def table(records, part):
    head = ("name", "shape", "flags", "dtype", "mamba ms", "ssmtune untuned ms", "vs mamba",
            "ssmtune tuned ms", "vs mamba", "untuned/tuned", "floor ms", "tuned x floor",
            "tuned config", "tune s / configs timed", "accuracy mamba / untuned / tuned")
    out = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for rec in records:
        c = rec["case"]
        shape = f"({c['batch']},{c['dim']},{c['seqlen']},{c['dstate']})"
        if "error" in rec:
            out.append(f"| {rec['name']} | {shape} | {rec['flags']} | {c['dtype']} | "
                       + "n/a | " * 10 + compare._short(rec["error"]) + " |")
            continue
        n = row_numbers(rec, part)
        cells = [rec["name"], shape, rec["flags"], c["dtype"],
                 ms_cell(rec, "mamba_ssm", part), ms_cell(rec, "untuned", part),
                 x_cell(n["untuned_vs_mamba"]), ms_cell(rec, "tuned", part),
                 x_cell(n["tuned_vs_mamba"]), x_cell(n["untuned_over_tuned"]),
                 f"{n['floor']:.4g}", compare._fmt(n["tuned_x_floor"], ".2f"),
                 config_cell(rec, part), tune_cell(rec, part),
                 " / ".join(verdict_of(rec, name, part) for name in CONTENDERS)]
        out.append("| " + " | ".join(cells) + " |")
    return out


def _extreme(pairs, pick):
    pairs = [(v, n) for v, n in pairs if v is not None]
    return pick(pairs) if pairs else None


def targets(records, backward):
    """Issue 14's targets (and the training step's of issue 15) read off the forward table."""
    ok = [r for r in records if "error" not in r]
    lines = []

    def versus(group, goal, part="fwd"):
        vals = [(row_numbers(r, part)["tuned_vs_mamba"], r["name"]) for r in ok
                if r["case"]["group"] == group]
        got = [v for v, _ in vals if v is not None]
        if not got:
            return f"- {group} ({PARTS[part].lower()}): no side-by-side numbers"
        low = _extreme(vals, min)
        return (f"- {group} ({PARTS[part].lower()}), tuned vs mamba_ssm: "
                f"{sum(v >= goal for v in got)} of {len(got)} at >= {goal}x; lowest "
                f"{low[0]:.2f}x ({low[1]})")

    lines.append(versus("train", 2.0))
    lines.append(versus("prefill", 1.5))
    slower = [f"{r['name']} ({which} {v:.2f}x)" for r in ok
              for which, v in (("untuned", row_numbers(r, "fwd")["untuned_vs_mamba"]),
                               ("tuned", row_numbers(r, "fwd")["tuned_vs_mamba"]))
              if v is not None and v < 1.0]
    lines.append("- slower than mamba_ssm (forward): " + (", ".join(slower) or "none"))
    gaps = [(row_numbers(r, "fwd")["untuned_over_tuned"], r["name"]) for r in ok]
    got = [v for v, _ in gaps if v is not None]
    if got:
        high = _extreme(gaps, max)
        lines.append(f"- untuned within 15% of tuned (forward): {sum(v <= 1.15 for v in got)} "
                     f"of {len(got)}; widest {high[0]:.2f}x ({high[1]})")
        worse = [f"{n} ({v:.2f}x)" for v, n in gaps if v is not None and v < 0.95]
        lines.append("- tuned slower than untuned by over 5% (forward): "
                     + (", ".join(worse) or "none"))
    tunes = [(sum(x.get("wall_s") or 0 for x in tune_results(r, "fwd")),
              sum(x.get("timed") or 0 for x in tune_results(r, "fwd")), r["name"])
             for r in ok if tune_results(r, "fwd")]
    if tunes:
        longest = max(tunes)
        fewest = min(tunes, key=lambda t: t[1])
        lines.append(f"- forward tunes: longest {longest[0]:.1f} s ({longest[2]}); fewest "
                     f"configs timed {fewest[1]} ({fewest[2]})")
    if backward:
        lines.append(versus("train", 2.5, "step"))
    failed = [f"{r['name']} {name} {part}" for r in records for name in ("untuned", "tuned")
              for part in ("fwd", "bwd") if verdict_of(r, name, part) in FAILED]
    lines.append("- ssmtune outputs outside their fp64 budget: " + (", ".join(failed) or "none"))
    return lines


def report(meta, records, args):
    out = ["# Selective scan as Mamba models call it, side by side", ""]
    out.append(f"{meta['device']} ({meta['sm_count']} SMs, cc {meta['capability']}), torch "
               f"{meta['torch']}, CUDA {meta['cuda']}; seed {meta['seed']} "
               f"(--seed {meta['seed']} draws the same inputs)")
    out.append(f"mamba_ssm: {meta['mamba']}")
    out.append(f"untuned: an empty database; tuned: {meta['tuned_db']}"
               + (f", ssmtune.tune time_limit {args.tune_time_limit} s per problem"
                  if args.tune else ", not tuned in this run (--no-tune)"))
    out.append(f"timing: CUDA events, {args.flush_mib} MiB written before each call (L2 "
               f"flush), median of up to {args.reps} (at least {args.min_reps}, about "
               f"{args.max_seconds} s) after {args.warmup} warm-up calls")
    out.append(f"floor = max(bytes read and written once / {compare.COPY_BYTES_PER_S:.3g} B/s, "
               f"one exp per element / {compare.EXP_PER_S:.3g} exp/s); the step's: forward's + "
               "backward's; vs mamba = mamba ms / ssmtune ms (> 1: ssmtune faster); flags "
               f"'{FLAGS_TEXT}' = D, z, delta_bias, delta_softplus=True; last = "
               "return_last_state")
    out.append("accuracy: docs/accuracy.md's verdicts against fp64 (forward: out and the last "
               "state; backward: the worst gradient)")
    out += ["", "## Targets", ""] + targets(records, args.backward)
    for part in (("fwd", "bwd", "step") if args.backward else ("fwd",)):
        out += ["", f"## {PARTS[part]}", ""] + table(records, part)
    return "\n".join(out)
