# The template's frontend Dockerfile with the one line it lacks: ARG SOURCES_PATH (without it the
# build argument never reaches the stage and COPY takes the whole project). The base image is an
# argument so that a run without the vendor's images can name another.
ARG FRONTEND_BASE_IMAGE=olympeio/frontend-base:latest
FROM ${FRONTEND_BASE_IMAGE}
ARG SOURCES_PATH
COPY --chown=nginx:root $SOURCES_PATH /usr/share/nginx/html
