# mm2 image: the driver, the Connect worker, the Spark batch jobs (local mode, or the driver of a job
# on any Spark master) and `mm2 demo`. Build: `docker build -t mm2 .`; README "Container" for the rest.
#
# BASE is pinned to a Python minor version AND a Debian release: a floating `python:3.11-slim` moves to
# the next Debian (trixie has no openjdk-17), and the JRE below must exist in the base's release.
# Spark 4 runs on Java 17 and 21: bookworm has 17, trixie has 21 (--build-arg JRE=openjdk-21-jre-headless).
ARG BASE=python:3.11-slim-bookworm

# ---- build: the project and its extras into a venv; pip's work (PySpark's source archive is built into
# a wheel here) and its caches stay in this stage.
FROM ${BASE} AS build
ARG EXTRAS=spark,embedded,fast
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# pyjks (Java's JKS stores) needs twofish, published only as C source: compiled here, never in the image.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/mm2/venv
WORKDIR /src
COPY pyproject.toml README.md ./
COPY connect_core ./connect_core
COPY mirror ./mirror
COPY embedded_kafka ./embedded_kafka
# mm2's Spark jobs build a SparkSession and run parallelize/mapPartitions over Spark core: PySpark's jars
# for Hive, ORC, RocksDB state stores, MLlib and Spark Connect (and its examples) are never loaded (160 MB).
RUN /opt/mm2/venv/bin/pip install "./[${EXTRAS}]" \
    && cd /opt/mm2/venv/lib/python3*/site-packages/pyspark \
    && rm -rf examples jars/connect-repl \
    && for jar in 'hive-[!s]*' 'hive-s[!t]*' 'spark-hive*' 'datanucleus-*' 'derby*' 'jdo-api-*' 'javax.jdo-*' 'libthrift-*' \
                  'libfb303-*' 'orc-*' 'rocksdbjni-*' 'spark-mllib*' 'breeze*' 'spire*' 'algebra_*' 'cats-kernel*' \
                  'arpack*' 'lapack-*' 'blas-*' 'JTransforms-*' 'JLargeArrays-*' 'spark-connect_*'; do \
         rm -f jars/$jar; \
       done

# ---- runtime: the JRE, tini, the venv and a non-root user; no compiler, no pip cache, no apt lists.
FROM ${BASE}
ARG JRE=openjdk-17-jre-headless
# The JRE's post-install needs the man directory slim images leave out.
RUN mkdir -p /usr/share/man/man1 \
    && apt-get update \
    && apt-get install -y --no-install-recommends "${JRE}" tini \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
    && useradd --uid 10001 --user-group --home-dir /var/lib/mm2 --create-home --shell /usr/sbin/nologin mm2 \
    && mkdir -p /etc/mm2
COPY --from=build /opt/mm2/venv /opt/mm2/venv
COPY configs /opt/mm2/configs
ENV PATH=/opt/mm2/venv/bin:${PATH} PYTHONUNBUFFERED=1 LANG=C.UTF-8
USER mm2
WORKDIR /var/lib/mm2
# REST API (`dedicated.mode.enable.internal.rest = true`, `listeners`) and Prometheus metrics (--metrics-port).
EXPOSE 8083 9464
# mm2 stops gracefully on SIGTERM (tasks stopped, offsets flushed, group left, exit 0): `docker stop` sends
# it to mm2 through tini, which also reaps Spark's JVM and other children. Give it time (`docker stop -t 60`).
STOPSIGNAL SIGTERM
# Probes what the running command serves: `mm2 run --metrics-port`, or the REST listener of `mm2 run`
# (internal REST enabled) and `mm2 connect`; healthy without probing for commands that serve nothing.
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["/opt/mm2/venv/bin/python", "-m", "mirror.cli.healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "mm2"]
CMD ["run", "/etc/mm2/mm2.properties", "--metrics-port", "9464"]
