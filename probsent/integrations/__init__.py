"""Components that plug probsent into other libraries (each an optional extra)."""
