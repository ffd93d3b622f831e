"""The networks: the building blocks of every backbone (counter noise, projections, the
one linear call and its adapters, rotary positions, attention and encoder layers, LayerMaps)
and the classifiers built from them (word-level, BERT family, decoders)."""
