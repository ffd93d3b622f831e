"""Text to token ids: the word vocabulary, WordPiece/BPE through ``tokenizers``, and
label-word prompts (checked as untrusted data)."""
