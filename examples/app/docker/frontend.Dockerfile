# Frontend image: the web server's base image serving SOURCES_PATH (dist/web).
#
# In real use BASE_IMAGE is the vendor's frontend base image at tag "stable";
# the default is a public web server at its stable tag so the example runs.
# The files are owned by the web-server user with group root and are
# group-readable, so the image also runs under an arbitrary UID in group root
# (OpenShift-style).
ARG BASE_IMAGE=nginx:stable
FROM ${BASE_IMAGE}
ARG SOURCES_PATH=dist/web
ARG WEB_USER=nginx
ARG DOCUMENT_ROOT=/usr/share/nginx/html
USER root
RUN rm -rf "${DOCUMENT_ROOT:?}"/*
COPY --chown=${WEB_USER}:root ${SOURCES_PATH}/ ${DOCUMENT_ROOT}/
RUN chmod -R g+rX,o+rX "${DOCUMENT_ROOT}"
