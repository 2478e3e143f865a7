# syntax=docker/dockerfile:1
# mm2-watchdog: a static binary in a distroless, non-root image that runs with
# a read-only root filesystem.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# Keep this command in step with TestDockerfileBuildCommand.
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/mm2-watchdog ./cmd/mm2-watchdog

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mm2-watchdog /usr/local/bin/mm2-watchdog
USER 65532:65532
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/mm2-watchdog"]
CMD ["run"]
