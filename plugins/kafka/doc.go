// Package kafkaadapter is binky-adapter-kafka (alias redpanda): a slice is
// the topic prefix names.KafkaPrefix(slice), "<slice with '-' for '_'>.",
// on a Kafka-protocol cluster the developer already runs.
//
// admin_url is kafka://[user:password@]host:port[,host:port…] with an
// optional ?sasl=plain|scram-sha-256|scram-sha-512 (plain when a user is
// given) and ?tls=true. provision creates the topics config.topics names,
// each "<prefix><topic>", with config.partitions and config.replication,
// and reports existed when topics are configured (true when every one was
// there already); resolve answers the bootstrap address (the admin URL)
// and values "prefix" and "bootstrap" (host:port,…); destroy deletes every
// topic whose name starts with the prefix, and never any other but the
// prefix's claim topic (see below; each name is checked again right before
// the delete request). clone is not offered:
// describe says clone:false and Clone answers "unsupported".
//
// Slices share the admin credentials: the fence is the prefix, which the
// application must apply. config.acls = true (a principal per slice limited
// to its prefix) is not implemented and is refused with code invalid.
//
// The adapter claims slices (describe says claims:true). Kafka keeps no
// metadata on a prefix, and brokers refuse topic configs they do not know,
// so the owner's claim (sdk.Target.Claim) is the first claim record of the
// one-partition topic "__binky_owner.<prefix without its '.'>" (retention
// off), outside every slice's prefix. provision records it before making
// any topic, adopting a prefix that has none; provision, resolve and
// destroy refuse a prefix another owner claimed with code conflict,
// touching nothing; destroy deletes the claim topic after the slice's
// topics. Slices share the admin credentials, so an application can
// still reach the claim topic.
package kafkaadapter
