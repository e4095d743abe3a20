// Package acls is `silkworm acls`, Kafka's kafka-acls.sh: it adds, removes
// and lists ACL bindings over the CreateAcls, DeleteAcls and DescribeAcls
// APIs, with Kafka's options (--allow-principal, --operation, --topic,
// --group, --cluster, --transactional-id, --delegation-token,
// --user-principal, --resource-pattern-type, the --producer and --consumer
// shortcuts, --force) and Kafka's output, byte for byte:
//
//	Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
//	 	(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)
//
//	Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`:
//		(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW)
//
// The text is that of Kafka 4.x's tools/AclCommand.java (4.2 added the
// "Acl ... already exists." line for bindings that --add finds in place;
// Kafka 3.x's Scala tool put a space before each line break). Where Kafka
// iterates hash sets, and so prints in an order that changes from run to
// run, this tool sorts: resources by type, name and pattern type, entries
// by principal, host, operation and permission type.
//
// --remove without --force asks Kafka's question on stdout ("Are you sure
// you want to remove ACLs: ... (y/n)") and reads the answer from stdin; only
// "y" (any case) goes ahead, and end of input means no.
//
// The tool issues kmsg requests itself rather than going through kadm's
// ACLBuilder: the builder cannot express USER resources (--user-principal),
// and --add must create exactly the entries not already present, which is
// not always a product of principals, hosts and operations.
//
// Run is the only entry point; nothing here keeps state between calls.
package acls
