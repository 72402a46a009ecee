"""The ARM schema of each resource type and API version the templates write, for the
properties they set.

Why: ARM rejects (or, worse, silently drops) a property that the resource type's API version
does not have, and ``bicep build`` is not available here to warn about it. Each entry below
lists the *writable* properties of the objects the templates fill, copied from the generated
type reference of that API version in Azure/bicep-types-az (``generated/<provider>/<api>/
types.md``), which is what Bicep's type checker and the ARM template reference pages
(learn.microsoft.com/azure/templates/<type>/<api-version>) are generated from; the older
Service Bus version is also checked against its REST specification. ``SOURCES`` names the
file of each entry. Read-only properties are left out: a template must not set them.

Format of a spec: a dict of property name -> spec of its value; ``None`` is a value whose
inside is not checked (a string, number, boolean or a value the templates do not open);
``[spec]`` is an array whose items follow ``spec``; :data:`ANY_KEYS` is an object of free
keys (app settings). Top-level Bicep keywords (``name``, ``parent``, ``scope``,
``dependsOn``, ``location``, ``tags``) are checked by Bicep itself, not here.
"""

from __future__ import annotations

from typing import Any

ANY_KEYS: dict[str, Any] = {"*": None}
"""An object whose keys are free (e.g. app settings)."""

_TYPES = "https://github.com/Azure/bicep-types-az/blob/main/generated"

# ---------------------------------------------------------------- Service Bus
_SB_QUEUE_PROPERTIES = {
    # SBQueueProperties (2024-01-01); the same writable set in 2021-11-01.
    "autoDeleteOnIdle": None, "deadLetteringOnMessageExpiration": None,
    "defaultMessageTimeToLive": None, "duplicateDetectionHistoryTimeWindow": None,
    "enableBatchedOperations": None, "enableExpress": None, "enablePartitioning": None,
    "forwardDeadLetteredMessagesTo": None, "forwardTo": None, "lockDuration": None,
    "maxDeliveryCount": None, "maxMessageSizeInKilobytes": None, "maxSizeInMegabytes": None,
    "requiresDuplicateDetection": None, "requiresSession": None, "status": None,
}
_SB_SKU = {"name": None, "tier": None, "capacity": None}

# ---------------------------------------------------------------- role assignments
_ROLE_ASSIGNMENT = {
    "properties": {  # RoleAssignmentProperties
        "condition": None, "conditionVersion": None, "delegatedManagedIdentityResourceId": None,
        "description": None, "principalId": None, "principalType": None,
        "roleDefinitionId": None,
    },
}

# ---------------------------------------------------------------- Cosmos DB 2024-05-15
_COSMOS_INDEXING_POLICY = {  # IndexingPolicy
    "automatic": None,
    "compositeIndexes": [[{"order": None, "path": None}]],  # CompositePath[][]
    "excludedPaths": [{"path": None}],
    "includedPaths": [{"indexes": None, "path": None}],
    "indexingMode": None,
    "spatialIndexes": None,
}

SCHEMAS: dict[tuple[str, ...], dict[str, Any]] = {
    ("Microsoft.ServiceBus/namespaces", "2024-01-01"): {
        "identity": None,
        "sku": _SB_SKU,
        "properties": {  # SBNamespaceProperties
            "alternateName": None, "disableLocalAuth": None, "encryption": None,
            "minimumTlsVersion": None, "premiumMessagingPartitions": None,
            "privateEndpointConnections": None, "publicNetworkAccess": None,
            "zoneRedundant": None,
        },
    },
    ("Microsoft.ServiceBus/namespaces", "2021-11-01"): {
        "identity": None,
        "sku": _SB_SKU,
        "properties": {  # SBNamespaceProperties: no minimumTlsVersion in this version
            "alternateName": None, "disableLocalAuth": None, "encryption": None,
            "privateEndpointConnections": None, "zoneRedundant": None,
        },
    },
    ("Microsoft.ServiceBus/namespaces/queues", "2024-01-01"): {
        "properties": _SB_QUEUE_PROPERTIES,
    },
    ("Microsoft.ServiceBus/namespaces/queues", "2021-11-01"): {
        "properties": _SB_QUEUE_PROPERTIES,
    },
    ("Microsoft.Authorization/roleAssignments", "2022-04-01"): _ROLE_ASSIGNMENT,
    ("Microsoft.DocumentDB/databaseAccounts", "2024-05-15"): {
        "identity": None,
        "kind": None,
        "properties": {  # DatabaseAccountCreateUpdatePropertiesOrDatabaseAccountGetProperties
            "analyticalStorageConfiguration": None, "apiProperties": None,
            "backupPolicy": None,
            "capabilities": [{"name": None}],  # Capability
            "capacity": None, "connectorOffer": None,
            "consistencyPolicy": {  # ConsistencyPolicy
                "defaultConsistencyLevel": None, "maxIntervalInSeconds": None,
                "maxStalenessPrefix": None,
            },
            "cors": None, "createMode": None, "customerManagedKeyStatus": None,
            "databaseAccountOfferType": None, "defaultIdentity": None,
            "disableKeyBasedMetadataWriteAccess": None, "disableLocalAuth": None,
            "enableAnalyticalStorage": None, "enableAutomaticFailover": None,
            "enableBurstCapacity": None, "enableCassandraConnector": None,
            "enableFreeTier": None, "enableMultipleWriteLocations": None,
            "enablePartitionMerge": None, "ipRules": None,
            "isVirtualNetworkFilterEnabled": None, "keyVaultKeyUri": None,
            "locations": [{  # Location
                "failoverPriority": None, "isZoneRedundant": None, "locationName": None,
            }],
            "minimalTlsVersion": None, "networkAclBypass": None,
            "networkAclBypassResourceIds": None, "publicNetworkAccess": None,
            "restoreParameters": None, "virtualNetworkRules": None,
        },
    },
    ("Microsoft.DocumentDB/databaseAccounts/sqlDatabases", "2024-05-15"): {
        "properties": {
            "options": {"autoscaleSettings": {"maxThroughput": None}, "throughput": None},
            "resource": {"createMode": None, "id": None, "restoreParameters": None},
        },
    },
    ("Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers", "2024-05-15"): {
        "properties": {  # SqlContainerCreateUpdatePropertiesOrSqlContainerGetProperties
            "options": {"autoscaleSettings": {"maxThroughput": None}, "throughput": None},
            "resource": {  # SqlContainerResourceOrSqlContainerGetPropertiesResource
                "analyticalStorageTtl": None, "clientEncryptionPolicy": None,
                "computedProperties": None, "conflictResolutionPolicy": None,
                "createMode": None, "defaultTtl": None, "id": None,
                "indexingPolicy": _COSMOS_INDEXING_POLICY,
                "partitionKey": {"kind": None, "paths": None, "version": None},
                "restoreParameters": None, "uniqueKeyPolicy": None,
            },
        },
    },
    ("Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments", "2024-05-15"): {
        "properties": {"principalId": None, "roleDefinitionId": None, "scope": None},
    },
    # ---------------------------------------------------------------- App Service 2024-04-01
    ("Microsoft.Web/sites", "2024-04-01"): {
        "identity": {"type": None, "userAssignedIdentities": None},
        "kind": None,
        "properties": {  # SiteProperties, only the part the templates use (of ~50)
            "functionAppConfig": {  # FunctionAppConfig
                "deployment": {"storage": {  # FunctionsDeploymentStorage
                    "authentication": {  # FunctionsDeploymentStorageAuthentication
                        "storageAccountConnectionStringName": None, "type": None,
                        "userAssignedIdentityResourceId": None,
                    },
                    "type": None, "value": None,
                }},
                "runtime": {"name": None, "version": None},  # FunctionsRuntime
                "scaleAndConcurrency": {  # FunctionsScaleAndConcurrency
                    # FunctionsAlwaysReadyConfig
                    "alwaysReady": [{"instanceCount": None, "name": None}],
                    "instanceMemoryMB": None,
                    "maximumInstanceCount": None, "triggers": None,
                },
            },
            "httpsOnly": None,
            "serverFarmId": None,
            "siteConfig": {"minTlsVersion": None},  # SiteConfig, the part the templates use
        },
    },
    ("Microsoft.Web/sites/config", "2024-04-01"): {
        "properties": ANY_KEYS,  # name 'appsettings': string values under free keys
    },
    ("Microsoft.Web/sites/basicPublishingCredentialsPolicies", "2024-04-01"): {
        "properties": {"allow": None},  # CsmPublishingCredentialsPoliciesEntityProperties
    },
    # name 'authsettingsV2': SiteAuthSettingsV2Properties, the part the templates use.
    ("Microsoft.DurableTask/schedulers", "2025-11-01"): {
        "properties": {  # SchedulerProperties; SchedulerSku
            "ipAllowlist": None, "sku": {"capacity": None, "name": None},
        },
    },
    ("Microsoft.DurableTask/schedulers/taskHubs", "2025-11-01"): {
        "properties": {},  # TaskHubProperties: read-only only
    },
    ("Microsoft.Web/sites/config", "2024-04-01", "authsettingsV2"): {
        "properties": {
            "platform": {"enabled": None, "runtimeVersion": None, "configFilePath": None},
            "globalValidation": {"requireAuthentication": None,
                                 "unauthenticatedClientAction": None,
                                 "redirectToProvider": None, "excludedPaths": None},
            "httpSettings": {"requireHttps": None, "routes": None, "forwardProxy": None},
            "identityProviders": {"azureActiveDirectory": {  # AzureActiveDirectory
                "enabled": None, "isAutoProvisioned": None,
                "registration": {  # AzureActiveDirectoryRegistration
                    "openIdIssuer": None, "clientId": None, "clientSecretSettingName": None,
                    "clientSecretCertificateThumbprint": None,
                    "clientSecretCertificateSubjectAlternativeName": None,
                    "clientSecretCertificateIssuer": None,
                },
                "login": {"loginParameters": None, "disableWWWAuthenticate": None},
                "validation": {"jwtClaimChecks": None, "allowedAudiences": None,
                               "defaultAuthorizationPolicy": None},
            }},
            "login": {"routes": None, "tokenStore": {"enabled": None,
                                                     "tokenRefreshExtensionHours": None,
                                                     "fileSystem": None,
                                                     "azureBlobStorage": None},
                      "preserveUrlFragmentsForLogins": None,
                      "allowedExternalRedirectUrls": None, "cookieExpiration": None,
                      "nonce": None},
        },
    },
}
"""(type, API version) -> spec of the writable properties (see the module docstring)."""

SOURCES: dict[tuple[str, ...], str] = {
    ("Microsoft.ServiceBus/namespaces", "2024-01-01"):
        f"{_TYPES}/servicebus/microsoft.servicebus/2024-01-01/types.md "
        "(SBNamespaceProperties, SBSku)",
    ("Microsoft.ServiceBus/namespaces", "2021-11-01"):
        f"{_TYPES}/servicebus/microsoft.servicebus/2021-11-01/types.md and "
        "https://github.com/Azure/azure-rest-api-specs/blob/main/specification/servicebus/"
        "resource-manager/Microsoft.ServiceBus/stable/2021-11-01/namespace-preview.json "
        "(SBNamespaceProperties)",
    ("Microsoft.ServiceBus/namespaces/queues", "2024-01-01"):
        f"{_TYPES}/servicebus/microsoft.servicebus/2024-01-01/types.md (SBQueueProperties)",
    ("Microsoft.ServiceBus/namespaces/queues", "2021-11-01"):
        f"{_TYPES}/servicebus/microsoft.servicebus/2021-11-01/types.md (SBQueueProperties)",
    ("Microsoft.Authorization/roleAssignments", "2022-04-01"):
        f"{_TYPES}/authorization/microsoft.authorization/2022-04-01/types.md "
        "(RoleAssignmentProperties)",
    ("Microsoft.DocumentDB/databaseAccounts", "2024-05-15"):
        f"{_TYPES}/cosmos-db/microsoft.documentdb/2024-05-15/types.md "
        "(DatabaseAccountCreateUpdatePropertiesOrDatabaseAccountGetProperties, Location, "
        "ConsistencyPolicy, Capability)",
    ("Microsoft.DocumentDB/databaseAccounts/sqlDatabases", "2024-05-15"):
        f"{_TYPES}/cosmos-db/microsoft.documentdb/2024-05-15/types.md "
        "(SqlDatabaseCreateUpdatePropertiesOrSqlDatabaseGetProperties)",
    ("Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers", "2024-05-15"):
        f"{_TYPES}/cosmos-db/microsoft.documentdb/2024-05-15/types.md "
        "(SqlContainerResourceOrSqlContainerGetPropertiesResource, IndexingPolicy, "
        "CompositePath, ContainerPartitionKey, CreateUpdateOptions, AutoscaleSettings)",
    ("Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments", "2024-05-15"):
        f"{_TYPES}/cosmos-db/microsoft.documentdb/2024-05-15/types.md "
        "(SqlRoleAssignmentResource)",
    ("Microsoft.Web/sites", "2024-04-01"):
        f"{_TYPES}/web/microsoft.web/2024-04-01/types.md (SiteProperties, SiteConfig, "
        "FunctionAppConfig, FunctionsDeployment*, FunctionsRuntime, "
        "FunctionsScaleAndConcurrency)",
    ("Microsoft.Web/sites/config", "2024-04-01"):
        f"{_TYPES}/web/microsoft.web/2024-04-01/types.md (StringDictionaryProperties)",
    ("Microsoft.Web/sites/basicPublishingCredentialsPolicies", "2024-04-01"):
        f"{_TYPES}/web/microsoft.web/2024-04-01/types.md "
        "(CsmPublishingCredentialsPoliciesEntityProperties)",
    ("Microsoft.DurableTask/schedulers", "2025-11-01"):
        f"{_TYPES}/durabletask/microsoft.durabletask/2025-11-01/types.md "
        "(SchedulerProperties, SchedulerSku)",
    ("Microsoft.DurableTask/schedulers/taskHubs", "2025-11-01"):
        f"{_TYPES}/durabletask/microsoft.durabletask/2025-11-01/types.md (TaskHubProperties)",
    ("Microsoft.Web/sites/config", "2024-04-01", "authsettingsV2"):
        f"{_TYPES}/web/microsoft.web/2024-04-01/types.md (SiteAuthSettingsV2Properties, "
        "GlobalValidation, HttpSettings, AzureActiveDirectory*, Login, TokenStore; written "
        "from the ARM template reference of sites/config 'authsettingsV2', the 2024-04-01 "
        "file itself not re-read)",
}
"""Where each entry of :data:`SCHEMAS` was copied from."""

BICEP_KEYWORDS = frozenset({"name", "parent", "scope", "dependsOn", "location", "tags"})
"""Top-level keys of a resource body that Bicep itself checks."""


def unknown_paths(value: Any, spec: Any, path: str = "") -> list[str]:
    """Paths in ``value`` that ``spec`` does not have (see the module docstring).

    Parameters
    ----------
    value : Any
        An evaluated resource body or part of it.
    spec : Any
        Its spec.
    path : str
        Where ``value`` is, for the messages.

    Returns
    -------
    list of str
        Dotted paths of unknown properties, and of objects whose keys could not be read
        (a deployment-time value where the spec expects an object) marked ``(not evaluable)``.
    """
    if spec is None or spec is ANY_KEYS:
        return []
    if isinstance(spec, list):
        if not isinstance(value, list):
            return [f"{path} (not evaluable)"] if not isinstance(value, str | int | bool) else []
        return [p for i, item in enumerate(value)
                for p in unknown_paths(item, spec[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return [f"{path} (not evaluable)"]
    found = []
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        if key not in spec:
            found.append(where)
        else:
            found += unknown_paths(item, spec[key], where)
    return found
