// Package httpadapters is the module of Binky's four HTTP adapters, one
// binary each: binky-adapter-rabbitmq (a vhost per slice, package
// rabbitmq), binky-adapter-clickhouse (a database per slice, package
// clickhouse), binky-adapter-elasticsearch, alias opensearch (an index
// prefix per slice, package elasticsearch) and binky-adapter-qdrant (a
// collection prefix per slice, package qdrant). They speak their servers'
// HTTP APIs with net/http through internal/httpx; no vendor SDK.
//
// This package holds no code: its tests run the conformance kit
// (sdk/adaptertest) against each built binary, on the real RabbitMQ and
// ClickHouse servers and on the API models of package apimodel for
// Elasticsearch and Qdrant, which cannot be installed here.
package httpadapters
