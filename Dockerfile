# mm2 image: the driver, the Connect worker and the Spark batch jobs (local mode).
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/mm2
COPY pyproject.toml README.md ./
COPY connect_core ./connect_core
COPY mirror ./mirror
COPY configs ./configs
RUN pip install --no-cache-dir '.[spark]'
EXPOSE 8083 9464
ENTRYPOINT ["mm2"]
CMD ["run", "/etc/mm2/mm2.properties"]
