# Frontend image: the web server's base image serving SOURCES_PATH (dist/web).
#
# In real use FRONTEND_BASE_IMAGE is the vendor's frontend base image at tag "stable"
# (or pinned: name:stable@sha256:…); the default is a public web server so
# the example runs. The files are owned by the web server's user (WEB_USER)
# with group root and readable by group and others, so the image also runs
# under an arbitrary UID in group root (OpenShift-style). The final stage
# adds no USER and no RUN: the image runs as its base image's own user, and
# holds the files once.
ARG FRONTEND_BASE_IMAGE=nginx:stable
ARG HELPER_IMAGE=busybox:stable

# Permissions are set in a throwaway stage, so the final stage needs no root.
FROM ${HELPER_IMAGE} AS site
ARG SOURCES_PATH=dist/web
COPY ${SOURCES_PATH}/ /site/
RUN chmod -R u=rwX,go=rX /site

FROM ${FRONTEND_BASE_IMAGE}
ARG WEB_USER=nginx
ARG DOCUMENT_ROOT=/usr/share/nginx/html
COPY --from=site --chown=${WEB_USER}:root /site/ ${DOCUMENT_ROOT}/
