"""Models for the tracing tests, built by functions that return (model, inputs), as `workbench import-torch
FILE.py:FUNCTION` and File ▸ Import PyTorch model… call them. They run under torch.device("meta"): no weights."""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, width=64, hidden=256):
        super().__init__()
        self.up = nn.Linear(width, hidden)
        self.act = nn.GELU()
        self.down = nn.Linear(hidden, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.down(self.act(self.up(x))))


def mlp():
    return MLP(), torch.randn(32, 64)


def with_sort():
    """An op without a declaration (sort) between two that have one."""

    class Sorting(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = nn.Linear(16, 16)
            self.second = nn.Linear(16, 16)

        def forward(self, x):
            return self.second(torch.sort(self.first(x), dim=-1).values)

    return Sorting(), torch.randn(8, 16)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet50(nn.Module):
    """ResNet-50's architecture (He et al. 2016, the torchvision layout): bottleneck blocks [3, 4, 6, 3]."""

    def __init__(self, classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._stage(64, 3)
        self.layer2 = self._stage(128, 4, stride=2)
        self.layer3 = self._stage(256, 6, stride=2)
        self.layer4 = self._stage(512, 3, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, classes)

    def _stage(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * 4:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride=stride, bias=False), nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50():
    return ResNet50().eval(), torch.randn(2, 3, 224, 224)


def broken():
    raise ValueError("this builder fails on purpose")


def not_a_pair():
    return 42


class SelfAttention(nn.Module):
    def __init__(self, width=64, heads=4, causal=False):
        super().__init__()
        self.qkv = nn.Linear(width, 3 * width)
        self.heads, self.causal = heads, causal

    def forward(self, x):
        b, s, w = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        return nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal).sum()


def attention():
    return SelfAttention(), torch.randn(2, 32, 64)


def causal_attention():
    return SelfAttention(causal=True), torch.randn(2, 32, 64)


def makes_tensors():
    """A forward that makes a tensor without naming a device (traced on the meta device like the rest)."""

    class Positions(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Embedding(64, 16)

        def forward(self, x):
            return x + self.table(torch.arange(x.shape[1]))

    return Positions(), torch.randn(4, 32, 16)
