# Shaped as the vendor's template: a Node.js 18 runtime base (the build runs on Node.js 24), no ARG SOURCES_PATH.
FROM olympeio/backend-base:18-latest
COPY $SOURCES_PATH /home/node/app
