"""GRPO with LoRA on ASQA-style prompts, rewarded by the deterministic grounding reward.

TRL's GRPOTrainer samples `num_generations` answers per prompt, scores each with
`GroundingReward` (one support-scorer call per batch) and updates only the LoRA adapter.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from attrib_audit.files.outdir import write_text_atomic
from attrib_audit.probe.records import AsqaExample
from attrib_audit.probe.reward import TERMS, RewardConfig, SupportFn, grounding_rewards
from attrib_audit.text.answers import normalize_answer

INSTRUCTION = ("Answer the question using only the numbered passages below. Cite the passage that supports "
               "each sentence with its number in brackets, e.g. [1]. If the question can be read in "
               "several ways, answer each reading.")


def passage_answerable(example: AsqaExample, passages: Sequence[str]) -> bool:
    """The evidence supports an answer when some qa_pair alias occurs in the passages (normalised)."""
    text = normalize_answer(" ".join(passages))
    return any(normalize_answer(a) in text for qa in example.qa_pairs for a in qa.short_answers)


def build_prompt(example: AsqaExample, max_docs: int | None) -> str:
    docs = example.docs if max_docs is None else example.docs[:max_docs]
    body = "\n".join(f"[{k}] {d.title}: {d.text}" if d.title else f"[{k}] {d.text}" for k,
                     d in enumerate(docs, start=1))
    return f"{INSTRUCTION}\n\nPassages:\n{body}\n\nQuestion: {example.question}\nAnswer:"


def prompt_rows(examples: Sequence[AsqaExample], max_docs: int | None) -> list[dict[str, Any]]:
    """One row per example: prompt, the passages the prompt shows, answerable, and a swap passage.

    The swap passage is the first passage of the next example (cyclically): deterministic and
    about something else. With a single example there is none.
    """
    rows = []
    for i, ex in enumerate(examples):
        docs = ex.docs if max_docs is None else ex.docs[:max_docs]
        passages = [d.as_evidence() for d in docs]
        other = examples[(i + 1) % len(examples)]
        unrelated = other.docs[0].as_evidence() if len(examples) > 1 and other.docs else None
        rows.append({"id": ex.id, "prompt": build_prompt(ex, max_docs), "passages": passages,
                     "answerable": passage_answerable(ex, passages), "unrelated": unrelated})
    return rows


def completion_text(completion: Any) -> str:
    """A plain-text completion, or the assistant turn of a conversational one."""
    if isinstance(completion, str):
        return completion
    return "".join(m.get("content", "") for m in completion if isinstance(m, dict))


class GroundingReward:
    """TRL reward function: the weighted grounding reward of each completion; logs every term."""

    __name__ = "grounding_reward"  # TRL names the reward's metrics after it

    def __init__(self, support: SupportFn, config: RewardConfig) -> None:
        self.support, self.config = support, config
        self.calls = 0
        self.log: list[dict[str, float]] = []

    def __call__(self, prompts: list, completions: list, passages: list, answerable: list, unrelated: list,
                 **_: Any) -> list[float | None]:  # TRL's reward signature (None: no reward for that completion)
        terms = grounding_rewards([completion_text(c) for c in completions], passages, self.support, self.config,
                                  answerable=answerable, unrelated=unrelated)
        self.calls += 1
        self.log.append({k: float(np.mean([getattr(t, k) for t in terms])) for k in (*TERMS, "total")}
                        | {"n": len(terms)})
        rewards: list[float | None] = [t.total for t in terms]
        return rewards


@dataclass(kw_only=True)
class TrainConfig:
    model: str  # local folder (or a hub id when online)
    out: str
    max_steps: int = 200
    learning_rate: float = 1e-5
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    target_modules: str = "all-linear"
    num_generations: int = 8
    batch_size: int = 8  # completions per device step; a multiple of num_generations
    gradient_accumulation_steps: int = 1
    max_completion_length: int = 256
    temperature: float = 1.0
    max_docs: int | None = 5
    seed: int = 0
    device: str = "cpu"
    bf16: bool = False
    gradient_checkpointing: bool = False
    logging_steps: int = 1


def _tokenizer(model: str):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def run_grpo(examples: Sequence[AsqaExample], config: TrainConfig, reward: GroundingReward) -> dict[str, Any]:
    """Train the LoRA adapter; save it under out/adapter and a summary in out/train_summary.json."""
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    if config.batch_size % config.num_generations:
        raise ValueError(f"batch_size {config.batch_size} must be a multiple of num_generations "
                         f"{config.num_generations}")
    tok = _tokenizer(config.model)
    chat = bool(getattr(tok, "chat_template", None))
    rows = prompt_rows(examples, config.max_docs)
    data = [{**r, "prompt": [{"role": "user", "content": r["prompt"]}] if chat else r["prompt"]} for r in rows]
    prompt_tokens = [len(tok.apply_chat_template(d["prompt"], tokenize=True, add_generation_prompt=True,
                                                 return_dict=False)) if chat
                     else len(tok(d["prompt"])["input_ids"]) for d in data]
    args = GRPOConfig(
        output_dir=config.out, max_steps=config.max_steps, learning_rate=config.learning_rate,
        per_device_train_batch_size=config.batch_size, gradient_accumulation_steps=config.gradient_accumulation_steps,
        num_generations=config.num_generations, max_completion_length=config.max_completion_length,
        temperature=config.temperature, seed=config.seed, use_cpu=config.device == "cpu", bf16=config.bf16,
        gradient_checkpointing=config.gradient_checkpointing, logging_steps=config.logging_steps,
        save_strategy="no", report_to="none", disable_tqdm=True,
        model_init_kwargs={"dtype": "bfloat16"} if config.bf16 else None)
    lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                      target_modules=config.target_modules, task_type="CAUSAL_LM")
    trainer = GRPOTrainer(model=config.model, reward_funcs=reward, args=args, train_dataset=Dataset.from_list(data),
                          processing_class=tok, peft_config=lora)
    trainer.train()
    out = Path(config.out)
    trainer.save_model(str(out / "adapter"))
    summary = {
        "config": asdict(config), "reward": {"support_threshold": reward.config.support_threshold,
                                             "counterfactual": reward.config.counterfactual,
                                             "weights": asdict(reward.config.weights)},
        "n_prompts": len(rows), "n_answerable": int(sum(r["answerable"] for r in rows)), "conversational": chat,
        "prompt_tokens": {"max": int(max(prompt_tokens)), "mean": float(np.mean(prompt_tokens))},
        "steps": int(trainer.state.global_step), "reward_calls": reward.calls, "reward_log": reward.log,
        "trainer_log": trainer.state.log_history,
    }
    write_text_atomic(out / "train_summary.json", json.dumps(summary, indent=2, default=str))
    return summary
