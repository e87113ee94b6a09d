"""SkMTEB-style synthetic STS: source sentences, six LLM-written variants (scores 0-5), the dataset."""
