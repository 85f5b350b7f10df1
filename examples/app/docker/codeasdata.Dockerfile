# Code-as-data image: SOURCES_PATH (dist/codeAsData) at /root/patches, where the
# platform's deployment reads it (its Helm chart's init job copies ~/patches/ as
# root into the orchestrator's patches volume), owned 1000:1000 as in the
# vendor's template. In real use CODE_AS_DATA_BASE_IMAGE is the vendor's
# code-as-data base image (it has the tools that job runs: sh, rsync); the
# default is a minimal public image so the example runs.
ARG CODE_AS_DATA_BASE_IMAGE=busybox:stable
FROM ${CODE_AS_DATA_BASE_IMAGE}
ARG SOURCES_PATH=dist/codeAsData
COPY --chown=1000:1000 ${SOURCES_PATH}/ /root/patches/
WORKDIR /root/patches
