# The Mnemograph API. Neo4j + GDS run in their own container (docker-compose.yml).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /srv/mnemograph
# CPU-only torch first: the default wheel pulls in gigabytes of CUDA libraries.
RUN pip install --no-cache-dir --index-url https://download.pytorch.org/whl/cpu torch==2.13.0+cpu
COPY requirements.lock .
RUN pip install --no-cache-dir -r requirements.lock
COPY pyproject.toml README.md ./
COPY app app
COPY pipelines pipelines
COPY cypher cypher
COPY graph_schema graph_schema
COPY neo4j_runtime neo4j_runtime
RUN pip install --no-cache-dir --no-deps . && useradd --system mnemograph
# Export the embedding model to ONNX at build time (the query fast path; docs/configuration.md
# "The ONNX query encoder"), so the container starts with it instead of exporting at every start.
ENV MNEMOGRAPH_MODEL_CACHE_DIR=/srv/mnemograph/model-cache
RUN python -c "from pipelines.models.embeddings import load_embedder; print(load_embedder(cache_dir='$MNEMOGRAPH_MODEL_CACHE_DIR')[1].detail)"
USER mnemograph
EXPOSE 8000
CMD ["python", "-m", "app", "serve"]
