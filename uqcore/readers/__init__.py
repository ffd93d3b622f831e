"""Weights from outside, read strictly: Hugging Face config fields and folder layouts
(encoders, decoders), decoder classifier folders, and the pretrained bases a checkpoint
builds on (checked by sha256)."""
