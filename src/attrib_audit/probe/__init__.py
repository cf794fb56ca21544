"""Probe room: answer-level metrics (QA-EM, ROUGE-L, citations), rewrite detection, a grounding reward, GRPO."""
from attrib_audit.probe.compare import CompareConfig, ProbeResult, compare_systems
from attrib_audit.probe.metrics import answer_metrics, rouge_l, str_em
from attrib_audit.probe.records import AsqaExample, Passage, QAPair, load_asqa, load_outputs
from attrib_audit.probe.reward import RewardConfig, RewardTerms, RewardWeights, grounding_reward, grounding_rewards

__all__ = ["AsqaExample", "CompareConfig", "Passage", "ProbeResult", "QAPair", "RewardConfig", "RewardTerms",
           "RewardWeights", "answer_metrics", "compare_systems",
           "grounding_reward", "grounding_rewards", "load_asqa", "load_outputs", "rouge_l", "str_em"]
