# syntax=docker/dockerfile:1
# Three stages: the CSS is built from the views, the binary from the Go code
# with freshly generated templ output, and the runtime image holds only the
# static binary (pure Go, SQLite included), run as a non-root user.

FROM node:20-bookworm-slim AS css
WORKDIR /src
COPY package.json package-lock.json tailwind.config.js ./
RUN npm ci --no-audit --no-fund
COPY views ./views
COPY static ./static
RUN npm run build:css

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=css /src/static/app.css /src/static/console.css ./static/
# Paths in RUN steps are relative to WORKDIR: a test runs these steps
# outside Docker (dockerfile_test.go).
RUN go tool templ generate -path views \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o out/checkout . \
 && mkdir -p out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/out/checkout /checkout
# The embedded SQLite ledger (one instance) lives on a volume; several
# instances set DATABASE_URL=postgres://… instead.
COPY --from=build --chown=nonroot:nonroot /src/out/data /data
VOLUME /data
USER nonroot:nonroot
ENV ADDR=:8080 DATABASE_URL=sqlite:/data/checkout.db
EXPOSE 8080
ENTRYPOINT ["/checkout"]
