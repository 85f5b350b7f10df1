# Code-as-data image: SOURCES_PATH (dist/codeAsData) at /codeasdata, on a
# minimal base, for the platform to read the compositions from.
ARG CODE_AS_DATA_BASE_IMAGE=busybox:stable
FROM ${CODE_AS_DATA_BASE_IMAGE}
ARG SOURCES_PATH=dist/codeAsData
COPY --chown=65532:0 ${SOURCES_PATH}/ /codeasdata/
USER 65532:0
WORKDIR /codeasdata
