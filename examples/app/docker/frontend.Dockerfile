# Frontend image: the web server's base image serving SOURCES_PATH (dist/web).
#
# In real use FRONTEND_BASE_IMAGE is the vendor's frontend base image at tag "stable"
# (or pinned: name:stable@sha256:…); the default is a public web server so
# the example runs. The files are owned by the web server's user (WEB_USER)
# with group root; the module's build leaves them readable by group and
# others (u=rwX,go=rX), so the image also runs under an arbitrary UID in
# group root (OpenShift-style). No USER and no RUN: the image runs as its
# base image's own user, and holds the files once.
ARG FRONTEND_BASE_IMAGE=nginx:stable
FROM ${FRONTEND_BASE_IMAGE}
ARG SOURCES_PATH=dist/web
ARG WEB_USER=nginx
ARG DOCUMENT_ROOT=/usr/share/nginx/html
COPY --chown=${WEB_USER}:root ${SOURCES_PATH}/ ${DOCUMENT_ROOT}/
