# Code-as-data image: SOURCES_PATH (dist/codeAsData) at /codeasdata, on a
# minimal base, for the platform to read the compositions from.
ARG BASE_IMAGE=busybox:stable
FROM ${BASE_IMAGE}
ARG SOURCES_PATH=dist/codeAsData
COPY --chown=65532:0 ${SOURCES_PATH}/ /codeasdata/
USER 65532:0
WORKDIR /codeasdata
