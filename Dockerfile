# syntax=docker/dockerfile:1
# The kafka-topic-operator image: `kto run` on a slim Python, as a non-root user, with only the runtime
# dependencies of the package (no PySpark, no test tools). Build: docker build -t kafka-topic-operator:0.1.0 .

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY operator/ operator/
# A wheel of the project, then a virtualenv with it and its runtime dependencies only (no extras).
RUN python -m pip wheel --no-deps --wheel-dir /wheels . \
 && python -m venv /opt/kto \
 && /opt/kto/bin/pip install /wheels/*.whl \
 && /opt/kto/bin/python -m compileall -q /opt/kto/lib

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="kafka-topic-operator" \
      org.opencontainers.image.description="Topics as code for ZooKeeper-mode Apache Kafka: the Kubernetes operator" \
      org.opencontainers.image.licenses="Apache-2.0"
# Bytecode was compiled at build time: the root filesystem is read-only at run time.
ENV PATH=/opt/kto/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    KTO_MATERIAL_DIR=/tmp/kto
RUN groupadd --system --gid 10001 kto \
 && useradd --system --uid 10001 --gid kto --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin kto
COPY --from=build /opt/kto /opt/kto
USER 10001:10001
EXPOSE 8080 9090
ENTRYPOINT ["kto"]
CMD ["run"]
