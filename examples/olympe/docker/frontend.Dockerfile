# Shaped as the vendor's template: no ARG SOURCES_PATH, so the copy takes the whole build context,
# which lowcode-pipeline makes the build output (dist/web).
FROM olympeio/frontend-base:latest
COPY --chown=nginx:root $SOURCES_PATH /usr/share/nginx/html
