"""Trigger sources of the local host: timer schedules and Service Bus queues."""
