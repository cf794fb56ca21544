"""Probe room: answer-level metrics (QA-EM, ROUGE-L, citations), rewrite detection, a grounding reward, GRPO."""
from attrib_audit.probe.compare import CompareConfig, ProbeResult, compare_systems, format_probe_table
from attrib_audit.probe.metrics import answer_metrics, citation_indices, normalize_answer, rouge_l, str_em
from attrib_audit.probe.records import AsqaExample, Passage, QAPair, load_asqa, load_outputs
from attrib_audit.probe.reward import RewardConfig, RewardTerms, RewardWeights, grounding_reward, grounding_rewards

__all__ = ["AsqaExample", "CompareConfig", "Passage", "ProbeResult", "QAPair", "RewardConfig", "RewardTerms",
           "RewardWeights", "answer_metrics", "citation_indices", "compare_systems", "format_probe_table",
           "grounding_reward", "grounding_rewards", "load_asqa", "load_outputs", "normalize_answer", "rouge_l", "str_em"]
