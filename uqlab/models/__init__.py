"""Models in and out of the lab: Hugging Face import helpers (reading length, probe), the
decoder export layout, the SmolLM2 GGUF conversion, a visitor's uploaded checkpoint
(validated) and the staging folders a killed process leaves."""
