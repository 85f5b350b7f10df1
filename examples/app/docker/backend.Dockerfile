# Backend image: a Node.js runtime running SOURCES_PATH (dist/node) from
# /home/node/app, where the platform's deployment runs it (its Helm chart:
# workingDir /home/node/app, main.js), as the non-root user node.
# BACKEND_BASE_IMAGE is the runtime: by default the slim variant of the image
# the project was built in (same C library, so native addons built there run
# here); dist/node must be self-contained (bundled, or with its
# node_modules). The image starts it with `node .`, i.e. the "main" of
# dist/node/package.json, or index.js.
ARG BACKEND_BASE_IMAGE=node:24-slim
FROM ${BACKEND_BASE_IMAGE}
ARG SOURCES_PATH=dist/node
ENV NODE_ENV=production PORT=3000
WORKDIR /home/node/app
COPY --chown=node:root ${SOURCES_PATH}/ /home/node/app/
USER node
EXPOSE 3000
CMD ["node", "."]
