"""`attrib-audit probe compare|train`: answer-level metrics vs rewrites, and GRPO on the grounding reward."""
from __future__ import annotations

import argparse
import sys

from attrib_audit.cli.options import add_n_boot_arg, add_seed_arg, seed_int
from attrib_audit.data.origin import FileRef
from attrib_audit.engine.cache import ScoreCache
from attrib_audit.errors import UsageError
from attrib_audit.files.hashing import file_sha256
from attrib_audit.probe.compare import CompareConfig, compare_systems
from attrib_audit.probe.examples import example_paths
from attrib_audit.probe.records import load_asqa, load_outputs
from attrib_audit.probe.reward import RewardConfig, RewardWeights, scorer_support
from attrib_audit.probe.train import GroundingReward, TrainConfig, run_grpo
from attrib_audit.report.console import format_probe_table
from attrib_audit.scorers.base import ScorerOptionError, ScorerUnavailable
from attrib_audit.scorers.catalog import get_scorer


def _reward_args(p: argparse.ArgumentParser, scorer_default: str | None) -> None:
    p.add_argument("--reward-scorer", default=scorer_default,
                   help=f"registry scorer for claim support (lexical or minilm have default thresholds; "
                        f"default {scorer_default}{'; none = no reward terms' if scorer_default else ''})")
    p.add_argument("--support-threshold", type=float, help="score at which a passage supports a sentence "
                                                           "(default per scorer: lexical 0.15, minilm 0.5)")
    p.add_argument("--reward-weights", default="", metavar="TERM=W,...",
                   help="e.g. claim_support=1,counterfactual_margin=0.5,evidence_coverage=0.5,commitment=1")
    p.add_argument("--counterfactual", choices=("remove", "swap"), default="remove",
                   help="counterfactual passages: the example's other passages (remove) or an unrelated one (swap)")
    p.add_argument("--model-path", help="local weights for the reward scorer")


def _reward_config(args: argparse.Namespace) -> RewardConfig:
    try:
        return RewardConfig.for_scorer(args.reward_scorer, args.support_threshold,
                                       weights=RewardWeights.parse(args.reward_weights),
                                       counterfactual=args.counterfactual)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _scorer(args: argparse.Namespace, device: str):
    opts = {"device": device, **({"path": args.model_path} if args.model_path else {})}
    try:
        return get_scorer(args.reward_scorer, **opts)
    except (ScorerUnavailable, ScorerOptionError, KeyError) as exc:
        raise UsageError(f"reward scorer {args.reward_scorer}: {exc}") from None


def cmd_compare(args: argparse.Namespace) -> int:
    given = [args.base, args.tuned, args.data]
    if any(given) and not all(given):
        raise UsageError("compare: give BASE, TUNED and --data together (or none for the shipped example)")
    if not any(given):
        paths = example_paths()
        args.base, args.tuned, args.data = str(paths["base"]), str(paths["tuned"]), str(paths["data"])
        print("probe compare: shipped illustrative example (fictional ASQA-format set written for attrib-audit)",
              file=sys.stderr)
    examples = load_asqa(args.data)
    base, tuned = load_outputs(args.base), load_outputs(args.tuned)
    origin = {k: FileRef(path=str(p), sha256=file_sha256(p)) for k, p in
              (("data", args.data), ("base", args.base), ("tuned", args.tuned))}
    use_reward = args.reward_scorer not in (None, "none")
    config = CompareConfig(n_boot=args.n_boot, seed=args.seed, reward=_reward_config(args) if use_reward else None,
                           reward_scorer=args.reward_scorer if use_reward else None)
    cache = ScoreCache(":memory:" if args.no_cache else args.cache) if use_reward else None
    try:
        support = scorer_support(_scorer(args, args.device), cache=cache) if use_reward else None
        result = compare_systems(base, tuned, examples, config, support=support, origin=origin)
    finally:
        if cache is not None:
            cache.close()
    path = result.save(args.out)
    print(format_probe_table(result.results))
    print(f"\nresults: {path}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    examples = list(load_asqa(args.data or example_paths()["data"]).values())
    reward = GroundingReward(scorer_support(_scorer(args, args.scorer_device)), _reward_config(args))
    config = TrainConfig(model=args.model, out=args.out, max_steps=args.max_steps, learning_rate=args.lr,
                         lora_r=args.lora_r, lora_alpha=args.lora_alpha, target_modules=args.target_modules,
                         num_generations=args.num_generations, batch_size=args.batch_size,
                         gradient_accumulation_steps=args.grad_accum, max_completion_length=args.max_completion_length,
                         temperature=args.temperature, max_docs=args.max_docs, seed=args.seed, device=args.device,
                         bf16=args.bf16, gradient_checkpointing=args.gradient_checkpointing)
    summary = run_grpo(examples, config, reward)
    last = summary["reward_log"][-1] if summary["reward_log"] else {}
    print(f"{summary['steps']} GRPO steps on {summary['n_prompts']} prompts ({summary['n_answerable']} answerable); "
          f"reward called {summary['reward_calls']} times; "
          f"last batch mean reward {last.get('total', float('nan')):.3f}")
    print(f"adapter: {args.out}/adapter; summary: {args.out}/train_summary.json")
    return 0


def add_probe(sub) -> None:
    p = sub.add_parser("probe",
                       help="answer-level probe: QA-EM/ROUGE-L/citations vs rewrites; GRPO on a grounding reward")
    psub = p.add_subparsers(dest="probe_command", required=True)

    c = psub.add_parser("compare", help="compare two systems' ASQA-style answers (no arguments: the shipped example)")
    c.add_argument("base", nargs="?", help="BASE.jsonl: id + output per line")
    c.add_argument("tuned", nargs="?", help="TUNED.jsonl: id + output per line")
    c.add_argument("--data", help="ASQA-style examples (qa_pairs, long answers, docs)")
    c.add_argument("--out", default="attrib-audit-probe",
                   help="output folder for probe.json (default attrib-audit-probe)")
    add_n_boot_arg(c)
    add_seed_arg(c)
    _reward_args(c, "lexical")
    c.add_argument("--device", default="cpu", help="device of the reward scorer: cpu, cuda or mps")
    c.add_argument("--cache", help="score cache for the reward scorer (default: the user cache)")
    c.add_argument("--no-cache", action="store_true", help="do not read or write the score cache")
    c.set_defaults(func=cmd_compare)

    t = psub.add_parser("train", help="GRPO + LoRA on ASQA-style prompts with the grounding reward (TRL)")
    t.add_argument("--model", required=True, help="causal LM folder or hub id, e.g. Qwen/Qwen2.5-3B-Instruct")
    t.add_argument("--data", help="ASQA-style examples (default: the shipped illustrative set)")
    t.add_argument("--out", required=True, help="output folder (adapter/, train_summary.json)")
    t.add_argument("--max-steps", type=int, default=200)
    t.add_argument("--lr", type=float, default=1e-5)
    t.add_argument("--lora-r", type=int, default=16)
    t.add_argument("--lora-alpha", type=int, default=32)
    t.add_argument("--target-modules", default="all-linear")
    t.add_argument("--num-generations", type=int, default=8, help="completions sampled per prompt")
    t.add_argument("--batch-size", type=int, default=8,
                   help="completions per device step (multiple of --num-generations)")
    t.add_argument("--grad-accum", type=int, default=1)
    t.add_argument("--max-completion-length", type=int, default=256)
    t.add_argument("--temperature", type=float, default=1.0)
    t.add_argument("--max-docs", type=int, default=5, help="passages shown per prompt")
    t.add_argument("--seed", type=seed_int, default=0)
    t.add_argument("--device", default="cpu", help="training device: cpu or cuda")
    t.add_argument("--bf16", action="store_true", help="bfloat16 weights and autocast (GPU)")
    t.add_argument("--gradient-checkpointing", action="store_true")
    _reward_args(t, "lexical")
    t.add_argument("--scorer-device", default="cpu", help="device of an embedding reward scorer (default cpu)")
    t.set_defaults(func=cmd_train)
