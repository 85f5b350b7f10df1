# The template's code-as-data Dockerfile, ARG SOURCES_PATH declared.
ARG CODE_AS_DATA_BASE_IMAGE=olympeio/codeasdata-base:latest
FROM ${CODE_AS_DATA_BASE_IMAGE}
ARG SOURCES_PATH
COPY --chown=1000:1000 $SOURCES_PATH /root/patches
RUN chmod 775 ~/patches
