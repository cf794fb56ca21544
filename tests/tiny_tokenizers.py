"""Tiny tokenizers of the real families, built here with the `tokenizers` library (no download).

- RoBERTa / BART: byte-level BPE, <s>=0 <pad>=1 </s>=2 <unk>=3 <mask>=4, pair `<s> A </s></s> B </s>`.
- T5: SentencePiece Unigram (Metaspace "▁"), <pad>=0 </s>=1 <unk>=2 and "▁"=3, "▁1"=209 as in the
  real T5 vocabulary (the ids MiniCheck-Flan-T5's code hard-codes), `A </s>` / `A </s> B </s>`.
- DeBERTa-v3: SentencePiece Unigram, [PAD]=0 [CLS]=1 [SEP]=2 [UNK]=3, `[CLS] A [SEP] B [SEP]` with
  token types 0/1.
- BERT: WordPiece (uncased), [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, `[CLS] A [SEP] B [SEP]`.
Each is saved as a folder AutoTokenizer loads (tokenizer.json + tokenizer_config.json naming the class).
"""
from __future__ import annotations

import json
from pathlib import Path

CORPUS = [
    "The cat sat on the mat.", "Paris is the capital of France.", "The bridge crosses the river near the town.",
    "A group of students gather in the school library to study for their upcoming final exams.",
    "The students are preparing for an examination.", "The harbour bridge opened to traffic in 1932.",
    "Sentence one tells of the cat and the mat and the hat.", "Dogs bark. Cats sleep all day.",
]
WORDS = sorted({w.strip(".,").lower() for s in CORPUS for w in s.split()}
               | {w.strip(".,") for s in CORPUS for w in s.split()})
CHARS = sorted(set("".join(CORPUS)) | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:;!?'\"()-"))


def _config(out: Path, cls: str, **tokens) -> str:
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": cls, "model_max_length": 512, **tokens}))
    return str(out)


def roberta_bpe(out: Path) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 10, trainer)
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    return _config(out, "RobertaTokenizer", bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
                   pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")


def _unigram(specials: list[str], fixed: dict[int, str], size: int):
    """A Unigram model whose pieces sit at chosen ids: specials first, `fixed` pieces at their ids."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    pieces = ["▁" + w for w in WORDS] + CHARS + ["▁" + c for c in CHARS]
    pieces = [p for p in dict.fromkeys(pieces) if p not in fixed.values()]
    vocab: list[str] = list(specials)
    while len(vocab) < size:
        i = len(vocab)
        vocab.append(fixed[i] if i in fixed else (pieces.pop(0) if pieces else f"<extra_{i}>"))
    scores = [(p, 0.0 if p in specials else (-2.0 if len(p) > 2 else -8.0)) for p in vocab]
    tok = Tokenizer(models.Unigram(scores, unk_id=vocab.index(next(s for s in specials if "unk" in s.lower()))))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tok


def t5_unigram(out: Path) -> str:
    from tokenizers import processors

    tok = _unigram(["<pad>", "</s>", "<unk>"], {3: "▁", 209: "▁1"}, 260)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    return _config(out, "T5Tokenizer", eos_token="</s>", pad_token="<pad>", unk_token="<unk>", extra_ids=0)


def deberta_unigram(out: Path) -> str:
    from tokenizers import processors

    tok = _unigram(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"], {}, 260)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    return _config(out, "DebertaV2Tokenizer", bos_token="[CLS]", eos_token="[SEP]", cls_token="[CLS]",
                   sep_token="[SEP]", pad_token="[PAD]", unk_token="[UNK]", mask_token="[MASK]")


def bert_wordpiece(out: Path) -> str:
    from tokenizers import BertWordPieceTokenizer

    tok = BertWordPieceTokenizer(lowercase=True)
    tok.train_from_iterator(CORPUS * 10, vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    return _config(out, "BertTokenizer", cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]", unk_token="[UNK]",
                   mask_token="[MASK]", do_lower_case=True)
