# mm2 image: the driver, the Connect worker and the Spark batch jobs (local mode).
# pyjks (Java's JKS stores) needs twofish, published only as C source: built here, so the image
# itself carries no compiler.
FROM python:3.11-slim AS wheels
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels 'twofish>=0.3'

FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/mm2
COPY pyproject.toml README.md ./
COPY connect_core ./connect_core
COPY mirror ./mirror
COPY configs ./configs
COPY --from=wheels /wheels /wheels
RUN pip install --no-cache-dir --find-links /wheels '.[spark]' && rm -rf /wheels
EXPOSE 8083 9464
ENTRYPOINT ["mm2"]
CMD ["run", "/etc/mm2/mm2.properties"]
