# The template's backend Dockerfile, ARG SOURCES_PATH declared.
ARG BACKEND_BASE_IMAGE=olympeio/backend-base:24-latest
FROM ${BACKEND_BASE_IMAGE}
ARG SOURCES_PATH
COPY $SOURCES_PATH /home/node/app
