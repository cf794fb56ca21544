"""Judge room: prompted LLM judges as scorers (local GGUF or an OpenAI-compatible server), and agreement."""
