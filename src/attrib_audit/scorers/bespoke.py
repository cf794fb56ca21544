"""Bespoke-MiniCheck-7B (bespokelabs/Bespoke-MiniCheck-7B) as its authors run it (Liyan06/MiniCheck, LLMCheck).

- Prompt: the checkpoint's own chat template over [system: SYSTEM_PROMPT, user: "Document: {chunk}\nClaim:
  {claim}"] with the generation prompt (minicheck/utils.py). The authors hand that string to vLLM's
  `LLM.generate`, which tokenises it with the tokenizer's special tokens (add_special_tokens=True, vllm-project/vllm
  issue 9519): InternLM2's tokenizer adds a BOS and its template starts with `{{ bos_token }}`, so the model
  reads `<s><s><|im_start|>system...`. `bos="vllm"` (default) feeds exactly that, the input the published
  scores come from; `bos="template"` feeds the template's own tokens only (one BOS, what `LLM.chat` and
  vLLM's server give).
- Label: one decoding step; P(yes) = the sum of the probabilities among the 5 most likely next tokens whose
  decoded text, lower-cased, is "yes" (vLLM logprobs=5 in the authors' code).
- Chunks: newline blocks and sentences (`nltk.sent_tokenize`: NLTK's Punkt, run offline by text.punkt) packed
  greedily up to 32768 - 300 tokens (the model's tokenizer).
- Aggregation: max over chunks; a multi-sentence claim is split into sentences ("the claim should first be
  broken up into sentences", model card; Punkt, as for the chunks) and the pair scores the min over them
  (every sentence must hold).
The model is InternLM2 with custom code in its repository: it runs only with --trust-remote-code. It is
run with transformers (no vLLM), in bfloat16 on a GPU; on a CPU it is very slow.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from attrib_audit.scorers.alignscore import per_claim
from attrib_audit.scorers.base import ScoreBatch, Scorer, ScorerOptionError, register
from attrib_audit.scorers.chunked import aggregate
from attrib_audit.scorers.fingerprint import library_versions, weights_fingerprint
from attrib_audit.scorers.hfmodels import (
    hub_scorer_spec,
    refuse_hub_offline,
    refuse_remote_code,
    require,
    require_punkt,
    torch_device,
)
from attrib_audit.scorers.recipe import Recipe
from attrib_audit.scorers.resolve import Resolved, load_or_unavailable
from attrib_audit.text.chunk import minicheck_chunks
from attrib_audit.text.punkt import PUNKT, punkt_sentences

BESPOKE_HUB = "bespokelabs/Bespoke-MiniCheck-7B"
SYSTEM_PROMPT = ("Determine whether the provided claim is consistent with the corresponding document. Consistency "
                 "in this context implies that all information presented in the claim is substantiated by the "
                 "document. If not, it should be considered inconsistent. Please assess the claim's consistency "
                 "with the document by responding with either \"Yes\" or \"No\".")
USER_PROMPT = "Document: [DOCUMENT]\nClaim: [CLAIM]"
MAX_MODEL_LEN = 32768
TOP_LOGPROBS = 5
BOS_MODES = ("vllm", "template")


class BespokeMiniCheckScorer(Scorer):
    name = "bespoke-minicheck"
    batch_size = 8
    window: int  # set from the model when it loads (always a number here)

    def __init__(self, resolved: Resolved, *, device: str = "cpu", window: int = MAX_MODEL_LEN,
                 trust_remote_code: bool = False, bos: str = "vllm", install_hint: str = "") -> None:
        require("transformers", self.name)
        import torch

        if bos not in BOS_MODES:
            raise ScorerOptionError(f"{self.name}: bos must be one of {', '.join(BOS_MODES)}, got {bos!r}")
        self.bos = bos

        self.device = torch_device(device, self.name)
        refuse_hub_offline(resolved, self.name, install_hint)
        splitter = require_punkt(self.name)
        self.resolved, self.window = resolved, int(window)
        self.chunk_size = self.window - 300  # the authors reserve 300 tokens for the prompt and claim

        def load(loc: str):
            from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

            try:
                AutoConfig.from_pretrained(loc, trust_remote_code=trust_remote_code)
            except ValueError as exc:
                refuse_remote_code(loc, self.name, exc)
                raise
            tok = AutoTokenizer.from_pretrained(loc, trust_remote_code=trust_remote_code)
            dtype = torch.bfloat16 if self.device != "cpu" else torch.float32
            model = AutoModelForCausalLM.from_pretrained(loc, dtype=dtype, trust_remote_code=trust_remote_code)
            return tok, model.to(self.device).eval()  # type: ignore[arg-type]  # transformers types .to unbound

        self.tokenizer, self.model = load_or_unavailable(resolved, load, what=self.name, install_hint=install_hint)
        self._yes: dict[int, bool] = {}
        self.recipe = Recipe(
            input="chat template(system=SYSTEM_PROMPT, user='Document: {chunk}\\nClaim: {claim}') + generation prompt, "
                  + ("tokenised with the tokenizer's special tokens, as vLLM's LLM.generate (BOS twice)"
                     if bos == "vllm" else "tokenised without adding special tokens (the template's BOS only)"),
            window=self.window, cut="none (chunks leave 300 tokens for prompt and claim)", chunk_unit="tokens",
            chunk_size=self.chunk_size, chunk_rule="newline blocks, then sentences; greedy whole-sentence packing",
            claim_split="sentences", sentences=PUNKT, aggregation="max over chunks, then min over claim sentences",
            precision="float32" if self.device == "cpu" else "bfloat16",
            label=f"sum of P(next token) over the top {TOP_LOGPROBS} whose decoded text lower() == 'yes'",
            source="Liyan06/MiniCheck minicheck/inference.py (LLMCheck) + utils.py prompts; model card")
        self._fingerprint = f"{weights_fingerprint(resolved)}:{library_versions('transformers', 'torch')},{splitter}"

    @property
    def signature(self) -> str:
        base = self.resolved.location.rstrip("/").split("/")[-1]
        return f"bespoke-minicheck:model={base}:weights={self._fingerprint}:recipe={self.recipe.digest()}:v1"

    def prompt(self, chunk: str, claim: str) -> list[int]:
        """The token ids of the authors' chat prompt for one (chunk, claim): the templated text tokenised as vLLM's
        `LLM.generate` does (special tokens added) or, with bos="template", as the template alone gives it."""
        user = USER_PROMPT.replace("[DOCUMENT]", chunk).replace("[CLAIM]", claim)
        text = self.tokenizer.apply_chat_template([{"role": "system", "content": SYSTEM_PROMPT},
                                                   {"role": "user", "content": user}],
                                                  add_generation_prompt=True, tokenize=False)
        return self.tokenizer(text, add_special_tokens=self.bos == "vllm")["input_ids"]

    def chunks(self, evidence: str) -> list[str]:
        tok = self.tokenizer

        def cost(units: list[str]) -> list[int]:
            return [len(x) for x in tok(units, add_special_tokens=False)["input_ids"]]
        return minicheck_chunks(evidence, self.chunk_size, cost)

    def _is_yes(self, token_id: int) -> bool:
        if token_id not in self._yes:
            self._yes[token_id] = self.tokenizer.decode([token_id]).lower() == "yes"
        return self._yes[token_id]

    def p_yes(self, ids: list[int]) -> float:
        import torch

        with torch.inference_mode():
            logits = self.model(input_ids=torch.tensor([ids], device=self.device)).logits[0, -1].float()
        top = torch.topk(torch.log_softmax(logits, dim=-1), TOP_LOGPROBS)
        return float(sum(v.exp().item() for v, i in zip(top.values, top.indices.tolist()) if self._is_yes(i)))

    def score(self, claims: Sequence[str], evidences: Sequence[str]) -> ScoreBatch:
        split = {e: self.chunks(e) for e in dict.fromkeys(evidences)}
        probs, chunk_owner, rows = [], [], 0
        sentence_owner = []
        for i, (c, e) in enumerate(zip(claims, evidences)):
            for s in punkt_sentences(c) or [c]:
                sentence_owner.append(i)
                for ch in split[e]:
                    chunk_owner.append(rows)
                    probs.append(self.p_yes(self.prompt(ch, s)))
                rows += 1
        per_sentence = aggregate(np.asarray(probs), np.asarray(chunk_owner, dtype=np.int64), rows, "max")
        ev = [len(self.tokenizer(evidences[i], add_special_tokens=False)["input_ids"]) for i in sentence_owner]
        batch = ScoreBatch(scores=per_sentence, truncated_tokens=np.zeros(rows, dtype=np.int64),
                           input_tokens=np.asarray(ev, dtype=np.int64),
                           chunks=np.asarray([len(split[evidences[i]]) for i in sentence_owner], dtype=np.int64),
                           failures=[None] * rows)
        return per_claim(batch, np.asarray(sentence_owner), len(claims), "min")


register(hub_scorer_spec("bespoke-minicheck", BESPOKE_HUB,
                         "Bespoke-MiniCheck-7B P(yes): max over chunks, min over claim sentences", "fact-check",
                         BespokeMiniCheckScorer,
                         sentences=PUNKT,
                         needs=("needs --trust-remote-code (the checkpoint's InternLM2 code runs)",
                                "needs a GPU with ~16 GB")))
